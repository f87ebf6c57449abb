/**
 * Wiki lint (FORMATS §8.5, knowledge-lint-core): errors for missing or
 * duplicate ids, leftover legacy folders and ids absent from index.md;
 * warnings for duplicate requests and drafts older than 30 days. Broken
 * frontmatter is reported with the file and line: `unreadable_entry` or
 * `missing_id` when it cost the entry, `bad_frontmatter` when the entry is
 * still read but not as written (a line the reader skips, a list or map left
 * unclosed, a key of the wrong type), saying how it is read.
 *
 * Beyond GUI-Anything's checks: an error for each secret a wiki file holds
 * (entries, index.md, the log, notes, audits, session bundles: written before
 * the observer redacted secrets as it read) with the file, the line and the
 * kind, and for each file or folder name that holds one (secrets.ts). No finding
 * shows a secret: every message and path is passed through redactSecrets last,
 * since a path (and so any finding naming the file) may hold one too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactSecrets } from '../../core/redact.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { LEGACY_DIRS, wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { normalizeMatchText } from '../text.js';
import { scanWikiSecrets } from './secrets.js';

export interface LintFinding {
  level: 'error' | 'warning';
  code: 'missing_id' | 'unreadable_entry' | 'bad_frontmatter' | 'duplicate_id' | 'legacy_dir' | 'not_in_index' | 'duplicate_request' | 'stale_draft' | 'secret' | 'secret_in_name';
  message: string;
  path?: string;
  line?: number;
  id?: string;
  /** secret, secret_in_name: what redactSecrets calls it (`aws-access-key`, `secret`, …), never the value. */
  kind?: string;
}

export const STALE_DRAFT_MS = 30 * 24 * 60 * 60 * 1000;

export function lintWiki(wikiRoot: string, now: Date): { errors: LintFinding[]; warnings: LintFinding[] } {
  const layout = wikiLayout(wikiRoot);
  const { entries, problems } = listWikiEntries(wikiRoot);
  const findings: LintFinding[] = [];
  const read = new Set(entries.map((e) => e.path));
  for (const p of problems) {
    const code = p.reason.startsWith('missing id') ? 'missing_id' : read.has(p.path) ? 'bad_frontmatter' : 'unreadable_entry';
    findings.push({ level: 'error', code, message: `${p.path}:${p.line}: ${p.reason}`, path: p.path, line: p.line });
  }
  const byId = new Map<string, string[]>();
  for (const e of entries) byId.set(e.id, [...(byId.get(e.id) ?? []), e.relativePath]);
  for (const [id, paths] of byId) if (paths.length > 1) findings.push({ level: 'error', code: 'duplicate_id', id, message: `id ${id} is used by ${paths.join(', ')}` });
  for (const dir of LEGACY_DIRS) {
    const path = join(layout.knowledge, dir);
    if (existsSync(path)) findings.push({ level: 'error', code: 'legacy_dir', path, message: `legacy folder ${path} is left over; run \`maestro wiki migrate\`` });
  }
  const index = existsSync(layout.index) ? readFileSync(layout.index, 'utf8') : '';
  const indexed = new Set([...index.matchAll(/^\|\s*([CNS]\d{3,})\s*\|/gm)].map((m) => m[1]));
  for (const e of entries) if (!indexed.has(e.id)) findings.push({ level: 'error', code: 'not_in_index', id: e.id, path: e.path, message: `${e.id} is missing from ${layout.index}` });
  const byRequest = new Map<string, string[]>();
  for (const e of entries) {
    const key = `${e.type}:${normalizeMatchText(e.request)}`;
    byRequest.set(key, [...(byRequest.get(key) ?? []), e.id]);
  }
  for (const ids of byRequest.values()) if (ids.length > 1) findings.push({ level: 'warning', code: 'duplicate_request', message: `entries ${ids.join(', ')} have the same request` });
  for (const e of entries) {
    const stamp = Date.parse(e.updated ?? e.created ?? '');
    if (e.status === 'draft' && Number.isFinite(stamp) && now.getTime() - stamp > STALE_DRAFT_MS) {
      findings.push({ level: 'warning', code: 'stale_draft', id: e.id, path: e.path, message: `${e.id} has been a draft since ${new Date(stamp).toISOString().slice(0, 10)}` });
    }
  }
  findings.push(...secretFindings(wikiRoot));
  const shown = findings.map(redactFinding);
  return { errors: shown.filter((f) => f.level === 'error'), warnings: shown.filter((f) => f.level === 'warning') };
}

function secretFindings(wikiRoot: string): LintFinding[] {
  const { files, names } = scanWikiSecrets(wikiRoot);
  const out: LintFinding[] = [];
  for (const f of files) {
    for (const h of f.hits) out.push({ level: 'error', code: 'secret', path: f.shown, line: h.line, kind: h.kind, message: `${f.shown}:${h.line}: holds a secret (${h.kind}); \`maestro wiki redact\` replaces it with [redacted: ${h.kind}]` });
  }
  for (const n of names) {
    const kind = n.kinds.join(', ');
    out.push({ level: 'error', code: 'secret_in_name', path: n.shown, kind, message: `${n.shown}: the ${n.isDirectory ? 'folder' : 'file'} name holds a secret (${kind}); rename it by hand (shown redacted)` });
  }
  return out;
}

/** The finding with any secret in its text replaced by its marker: a path, an id or a quoted frontmatter line may hold one. */
function redactFinding(f: LintFinding): LintFinding {
  return {
    ...f,
    message: redactSecrets(f.message),
    ...(f.path !== undefined ? { path: redactSecrets(f.path) } : {}),
    ...(f.id !== undefined ? { id: redactSecrets(f.id) } : {}),
  };
}
