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
import { fingerprintRow, sha256, type CorpusDoc } from './recipes.js';

interface FileCacheEntry {
  mtimeMs: number;
  size: number;
  docs: CorpusDoc[];
  rows: Array<{ target: string; id: string; json: string }>;
}

export interface CorpusSnapshot {
  docs: CorpusDoc[];
  fingerprint: string;
  /** Files parsed (not served from the cache) for this snapshot. */
  parsed: number;
}

const caches = new Map<string, RootCache>();

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

interface RootCache {
  files: Map<string, FileCacheEntry>;
  /** Every row in fingerprint order, kept sorted across calls; null until first built. */
  sorted: Row[] | null;
  fingerprint: string | null;
}
type Row = { target: string; id: string; json: string; file: string };

const collator = new Intl.Collator(); // the order localeCompare gives, as in recipes.ts
const cmpRow = (a: Row, b: Row) => collator.compare(a.target, b.target) || collator.compare(a.id, b.id);

function insertSorted(rows: Row[], r: Row): void {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cmpRow(rows[mid]!, r) <= 0) lo = mid + 1;
    else hi = mid;
  }
  rows.splice(lo, 0, r);
}

export function readCorpus(workflowDir: string, opts: { cache?: boolean } = {}): CorpusSnapshot {
  const useCache = opts.cache ?? true;
  let cache = useCache ? caches.get(workflowDir) : undefined;
  if (!cache) {
    cache = { files: new Map(), sorted: null, fingerprint: null };
    if (useCache) caches.set(workflowDir, cache);
  }
  const files = [...topLevelMd(join(workflowDir, 'specs')).map((p) => ({ p, kind: 'spec' as const })), ...topLevelMd(join(workflowDir, 'knowhow')).map((p) => ({ p, kind: 'knowhow' as const }))];
  const seen = new Set<string>();
  const changed = new Set<string>();
  const added: Row[] = [];
  const docs: CorpusDoc[] = [];
  for (const { p, kind } of files) {
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    seen.add(p);
    let hit = cache.files.get(p);
    if (!hit || hit.mtimeMs !== st.mtimeMs || hit.size !== st.size) {
      const text = readFileSync(p, 'utf8');
      const d = kind === 'spec' ? specDocs(workflowDir, p, text) : knowhowDocs(workflowDir, p, text);
      hit = { mtimeMs: st.mtimeMs, size: st.size, docs: d, rows: d.map((x) => ({ target: x.target, id: x.id, json: JSON.stringify(fingerprintRow(x)) })) };
      cache.files.set(p, hit);
      changed.add(p);
      for (const r of hit.rows) added.push({ ...r, file: p });
    }
    docs.push(...hit.docs);
  }
  for (const k of [...cache.files.keys()]) if (!seen.has(k)) {
    cache.files.delete(k);
    changed.add(k);
  }
  if (cache.sorted === null || changed.size > 64) {
    // First build, or many files changed: one full sort.
    const all: Row[] = [];
    for (const [file, e] of cache.files) for (const r of e.rows) all.push({ ...r, file });
    cache.sorted = all.sort(cmpRow);
    cache.fingerprint = null;
  } else if (changed.size) {
    // One changed file costs its own rows: drop them, insert the new ones in order.
    cache.sorted = cache.sorted.filter((r) => !changed.has(r.file));
    for (const r of added) insertSorted(cache.sorted, r);
    cache.fingerprint = null;
  }
  cache.fingerprint ??= sha256(`[${cache.sorted.map((r) => r.json).join(',')}]`);
  return { docs, fingerprint: cache.fingerprint, parsed: changed.size ? [...changed].filter((c) => seen.has(c)).length : 0 };
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
