/**
 * One corpus file's reconciliation documents (FORMATS §4.2): a spec file's
 * active entries, or a knowhow document, with the ids and aliases the
 * ledger's inputs may name. Parsed with Knowledge I's parsers.
 */
import { specEntryId } from '../../format/corpus.js';
import { asString } from '../../format/frontmatter.js';
import { parseKnowhowText } from '../../format/knowhowParser.js';
import { parseSpecText } from '../../format/specParser.js';
import type { CorpusDoc } from './recipes.js';

function rel(workflowDir: string, p: string): string {
  return p.slice(workflowDir.length + 1);
}

const INACTIVE = new Set(['deprecated', 'superseded']);

export function specDocs(workflowDir: string, path: string, text: string): CorpusDoc[] {
  const parsed = parseSpecText(text, path);
  const name = path.split('/').pop()!;
  const out: CorpusDoc[] = [];
  for (const e of parsed.entries) {
    const status = (e.status ?? 'active').toLowerCase();
    if (INACTIVE.has(status)) continue;
    // As maestro-flow's reconciler reads them: a tag entry's body loses its leading `### title` line,
    // a legacy heading entry keeps it (its content is `### <title>\n\n<body>`), and `ref=` is a relation.
    const legacy = e.form === 'legacy';
    const content = legacy ? e.content : specBody(e.content);
    const title = e.title.trim();
    if (!title || !content.trim()) continue;
    const id = e.sid ?? `legacy:${name}:${e.lineStart}`;
    out.push({
      id,
      target: 'spec',
      title,
      content,
      status,
      confidence: legacy ? null : (e.confidence ?? null),
      related: !legacy && e.ref ? [e.ref] : [],
      supersedes: legacy ? [] : e.supersedes,
      superseded_by: legacy ? null : (e.supersededBy ?? null),
      source_path: rel(workflowDir, path),
      source_line: e.lineStart,
      category: legacy ? null : (e.category ?? parsed.category ?? null),
      // The canonical Knowledge I id too, so inputs recorded by `maestro load` relate to this doc.
      aliases: [...(e.sid ? [e.sid, `spec:${e.sid}`] : [id]), specEntryId({ idPrefix: 'spec:project:' }, path, e.ordinal)],
    });
  }
  return out;
}

/** A tag entry's text without the `### title` line it starts with (only when it starts with one), trimmed. */
export function specBody(content: string): string {
  return content.trim().replace(/^###\s+.*?(?:\r?\n){1,2}/, '').trim();
}

export function knowhowDocs(workflowDir: string, path: string, text: string): CorpusDoc[] {
  const doc = parseKnowhowText(text, path);
  const status = (asString(doc.frontmatter.data.status) ?? 'active').toLowerCase();
  if (INACTIVE.has(status) || doc.status === 'deprecated') return [];
  const content = doc.body.trim();
  const title = (asString(doc.frontmatter.data.title) ?? '').trim() || doc.stem;
  if (!title || !content) return [];
  const aliases = [doc.id, doc.graphId, `knowhow:${doc.id}`, doc.stem, ...(doc.explicitId ? [doc.explicitId, `knowhow:${doc.explicitId}`] : [])];
  return [
    {
      id: doc.id,
      target: 'knowhow',
      title,
      content,
      status,
      confidence: doc.confidence ?? null,
      related: doc.related,
      supersedes: doc.supersedes,
      superseded_by: doc.supersededBy ?? null,
      source_path: rel(workflowDir, path),
      source_line: null,
      category: doc.category ?? asString(doc.frontmatter.data.type) ?? null,
      aliases,
    },
  ];
}
