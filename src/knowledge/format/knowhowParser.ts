/**
 * THE knowhow parser (FORMATS §2). One document per file: frontmatter plus a
 * markdown body. Like the spec parser it never throws: problems are findings,
 * and a CRLF file parses as its LF twin (the body reads each `\r\n` as `\n`).
 */
import { asList, asString, parseFrontmatter, type Frontmatter } from './frontmatter.js';
import { frontmatterProblems, KNOWHOW_FIELDS } from './frontmatterFields.js';
import type { Finding } from './specParser.js';
import { lfText, slugify } from './text.js';

/** FORMATS §2.1 type → filename prefix. */
export const KNOWHOW_PREFIX: Readonly<Record<string, string>> = {
  session: 'KNW',
  tip: 'TIP',
  template: 'TPL',
  recipe: 'RCP',
  reference: 'REF',
  decision: 'DCS',
  asset: 'AST',
  blueprint: 'BLP',
  document: 'DOC',
};
export const KNOWHOW_TYPES = Object.keys(KNOWHOW_PREFIX);
const PREFIX_TO_TYPE = Object.fromEntries(Object.entries(KNOWHOW_PREFIX).map(([t, p]) => [p, t]));

/** FORMATS §2.2 explicit id shape (after lowercasing). */
export const EXPLICIT_ID_RE = /^(knw|tip|tpl|rcp|ref|dcs|ast|blp|doc)-[0-9]{8}-[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface KnowhowDoc {
  file: string;
  stem: string;
  /** Canonical id `knowhow-<slug(stem)>` (FORMATS §2.2). */
  id: string;
  /** MaestroGraph node id `knowhow:<stem lowercased>`. */
  graphId: string;
  frontmatter: Frontmatter;
  type: string;
  category: string | undefined;
  title: string;
  description: string | undefined;
  keywords: string[];
  tags: string[];
  created: string | undefined;
  status: 'active' | 'deprecated';
  /** The raw status when it is a decision lifecycle value (proposed|accepted). */
  lifecycle: string | undefined;
  explicitId: string | undefined;
  supersedes: string[];
  supersededBy: string | undefined;
  related: string[];
  codePaths: string[];
  confidence: string | undefined;
  body: string;
  findings: Finding[];
}

export function knowhowIdForStem(stem: string): string {
  return `knowhow-${slugify(stem)}`;
}

export function parseKnowhowText(text: string, file: string): KnowhowDoc {
  const findings: Finding[] = [];
  const name = file.split(/[\\/]/).pop() ?? file;
  const stem = name.replace(/\.md$/i, '');
  const fm = parseFrontmatter(text);
  for (const p of frontmatterProblems(fm, KNOWHOW_FIELDS)) findings.push({ file, line: p.line, severity: 'warning', code: 'bad-frontmatter', message: p.message });
  if (text.includes('\u0000')) findings.push({ file, line: 1, severity: 'error', code: 'binary-content', message: 'file holds binary (NUL) content' });
  const d = fm.data;
  const prefix = /^([A-Za-z]{3})-/.exec(stem)?.[1]?.toUpperCase();
  const declaredType = asString(d.type);
  const type = declaredType && declaredType in KNOWHOW_PREFIX ? declaredType : prefix && PREFIX_TO_TYPE[prefix] ? PREFIX_TO_TYPE[prefix]! : declaredType ?? 'document';
  const rawStatus = (asString(d.status) ?? asString(d.lifecycleStatus) ?? '').toLowerCase();
  const status = rawStatus === 'deprecated' || rawStatus === 'superseded' ? 'deprecated' : 'active';
  const body = lfText(fm.body).replace(/^\s*\n/, '');
  const headingTitle = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  const explicit = (asString(d.explicitId) ?? asString(d.id))?.toLowerCase();
  return {
    file,
    stem,
    id: knowhowIdForStem(stem),
    graphId: `knowhow:${stem.toLowerCase()}`,
    frontmatter: fm,
    type,
    category: asString(d.category),
    title: asString(d.title) || headingTitle || stem,
    description: asString(d.description) ?? asString(d.summary),
    // As written: case matters for the explicit-id replay payload (knowhowWriter.ts); search folds case itself.
    keywords: asList(d.keywords),
    tags: asList(d.tags),
    created: asString(d.created),
    status,
    lifecycle: rawStatus && rawStatus !== 'active' && status === 'active' ? rawStatus : undefined,
    explicitId: explicit,
    supersedes: asList(d.supersedes),
    supersededBy: asString(d.supersededBy) ?? asString(d['superseded-by']),
    related: asList(d.related),
    codePaths: [...asList(d.codePaths), ...asList(d.relatedPaths)],
    confidence: asString(d.confidence),
    body,
    findings,
  };
}
