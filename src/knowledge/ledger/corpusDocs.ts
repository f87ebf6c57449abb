/**
 * The reconciliation corpus (FORMATS §4.2): the project's top-level
 * `.workflow/specs/*.md` entries and top-level `.workflow/knowhow/*.md`
 * documents, active only. Parsed with Knowledge I's parsers; cached per file
 * by (mtime, size) so that after one changed file the fingerprint costs one
 * parse and one row hash, not the whole corpus (seed 000 §11.1, "incremental").
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { specEntryId } from '../corpus.js';
import { asString } from '../frontmatter.js';
import { parseKnowhowText } from '../knowhowParser.js';
import { parseSpecText } from '../specParser.js';
import { fingerprintOf, fingerprintRow, type CorpusDoc, type FingerprintRow } from './recipes.js';

interface FileCacheEntry {
  mtimeMs: number;
  size: number;
  docs: CorpusDoc[];
  rows: FingerprintRow[];
}

export interface CorpusSnapshot {
  docs: CorpusDoc[];
  fingerprint: string;
  /** Files parsed (not served from the cache) for this snapshot. */
  parsed: number;
}

const caches = new Map<string, Map<string, FileCacheEntry>>();

/** Forget cached rows (tests and the benchmark measure the full path with it). */
export function clearCorpusCache(workflowDir?: string): void {
  if (workflowDir) caches.delete(workflowDir);
  else caches.clear();
}

function topLevelMd(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(dir, e.name))
    .sort();
}

export function readCorpus(workflowDir: string, opts: { cache?: boolean } = {}): CorpusSnapshot {
  const useCache = opts.cache ?? true;
  let cache = caches.get(workflowDir);
  if (!cache || !useCache) {
    cache = new Map();
    if (useCache) caches.set(workflowDir, cache);
  }
  const files = [...topLevelMd(join(workflowDir, 'specs')).map((p) => ({ p, kind: 'spec' as const })), ...topLevelMd(join(workflowDir, 'knowhow')).map((p) => ({ p, kind: 'knowhow' as const }))];
  const seen = new Set<string>();
  let parsed = 0;
  const docs: CorpusDoc[] = [];
  const rows: FingerprintRow[] = [];
  for (const { p, kind } of files) {
    seen.add(p);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    let hit = cache.get(p);
    if (!hit || hit.mtimeMs !== st.mtimeMs || hit.size !== st.size) {
      const text = readFileSync(p, 'utf8');
      const d = kind === 'spec' ? specDocs(workflowDir, p, text) : knowhowDocs(workflowDir, p, text);
      hit = { mtimeMs: st.mtimeMs, size: st.size, docs: d, rows: d.map(fingerprintRow) };
      cache.set(p, hit);
      parsed++;
    }
    docs.push(...hit.docs);
    rows.push(...hit.rows);
  }
  for (const k of [...cache.keys()]) if (!seen.has(k)) cache.delete(k);
  return { docs, fingerprint: fingerprintOf(rows), parsed };
}

function rel(workflowDir: string, p: string): string {
  return p.slice(workflowDir.length + 1);
}

const INACTIVE = new Set(['deprecated', 'superseded']);

function specDocs(workflowDir: string, path: string, text: string): CorpusDoc[] {
  const parsed = parseSpecText(text, path);
  const name = path.split('/').pop()!;
  const out: CorpusDoc[] = [];
  for (const e of parsed.entries) {
    const status = (e.status ?? 'active').toLowerCase();
    if (INACTIVE.has(status)) continue;
    const content = e.content.replace(/^\s*###[^\n]*\n?/, '').trim();
    const title = e.title.trim();
    if (!title || !content) continue;
    const id = e.sid ?? `legacy:${name}:${e.lineStart}`;
    out.push({
      id,
      target: 'spec',
      title,
      content,
      status,
      confidence: e.confidence ?? null,
      related: [],
      supersedes: e.supersedes,
      superseded_by: e.supersededBy ?? null,
      source_path: rel(workflowDir, path),
      source_line: e.lineStart,
      category: e.category ?? parsed.category ?? null,
      // The canonical Knowledge I id too, so inputs recorded by `maestro load` relate to this doc.
      aliases: [...(e.sid ? [e.sid, `spec:${e.sid}`] : [id]), specEntryId({ idPrefix: 'spec:project:' }, path, e.ordinal)],
    });
  }
  return out;
}

function knowhowDocs(workflowDir: string, path: string, text: string): CorpusDoc[] {
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
