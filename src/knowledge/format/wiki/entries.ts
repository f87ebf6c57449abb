/**
 * Knowledge entries on disk (FORMATS §8.4): reading them (tolerantly; a
 * broken file is reported with its path and line and left out), rendering a
 * new or updated entry, id allocation (C### / N### / S###, entities sharing
 * the N sequence with notes), and the plain-document view the knowledge index
 * consumes.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseFrontmatter, type FrontMatter, type FrontValue } from '../frontmatter.js';
import { fieldProblems, WIKI_FIELDS } from '../frontmatterFields.js';
import { ENTRY_TYPES, TYPE_DIR, TYPE_PREFIX, wikiLayout, type EntryType } from './layout.js';

export type Facet = 'hypothesis' | 'protocol' | 'command' | 'failure' | 'note';

export interface EntrySource {
  sessionId: string;
  explorationId: string;
  savedAt?: string;
}

export interface WikiEntry {
  id: string;
  slug: string;
  request: string;
  type: EntryType;
  facet?: Facet;
  tags: string[];
  created?: string;
  updated?: string;
  version: number;
  status: string;
  intentKey?: string;
  source: EntrySource;
  sources: EntrySource[];
  confidence: number;
  /** The first `# ` heading, else the request. */
  title: string;
  /** `## 摘要`, else `## 核心结论`, else legacy `## 问题/摘要`. */
  summary: string;
  body: string;
  /** Absolute path and the path relative to `wiki/knowledge/`. */
  path: string;
  relativePath: string;
  mtimeMs: number;
  size: number;
}

export interface WikiProblem {
  path: string;
  line: number;
  reason: string;
}

function asString(v: FrontValue | undefined): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

function asTags(v: FrontValue | undefined): string[] {
  if (Array.isArray(v)) return v.map((t) => asString(t)).filter(Boolean);
  if (typeof v === 'string' && v) return v.split(',').map((t) => t.trim()).filter(Boolean);
  return [];
}

function asSource(v: FrontValue | undefined): EntrySource {
  if (v && typeof v === 'object' && !Array.isArray(v)) return { sessionId: asString(v.session_id), explorationId: asString(v.exploration_id) };
  // Legacy scalar form, e.g. `source: exploration/exp_1` or `source: session` (FORMATS §8.4 quirk).
  const legacy = /exploration\/(exp_\d+)/.exec(asString(v));
  return { sessionId: '', explorationId: legacy?.[1] ?? '' };
}

const ID_IN_NAME = /^([CNS]\d{3,})-/;

/**
 * An entry's version as GUI-Anything reads it (`^version:\s*(\d+)`): the leading number, so `version: 3 # by hand`
 * is 3, not a string that an update would turn back into version 2; 1 when there is none.
 */
export function entryVersion(value: FrontValue | undefined): number {
  if (typeof value === 'number') return value;
  const digits = typeof value === 'string' ? /^\s*(\d+)/.exec(value)?.[1] : undefined;
  return digits ? Number(digits) : 1;
}

/** Parses one entry file; `null` plus problems when it cannot be used. */
export function parseEntryFile(path: string, knowledgeRoot: string, text: string, stat: { mtimeMs: number; size: number }): { entry: WikiEntry | null; problems: WikiProblem[] } {
  const doc = parseFrontmatter(text, { dialect: 'wiki' });
  const typeProblems = fieldProblems(doc, WIKI_FIELDS);
  const problems: WikiProblem[] = [...doc.problems, ...typeProblems].sort((a, b) => a.line - b.line).map((p) => ({ path, line: p.line, reason: p.message }));
  // A key of the wrong type is named by its type problem; "missing" would send the person looking for a line that is there.
  const mistyped = new Set(typeProblems.map((p) => p.key));
  const fm: FrontMatter = doc.data;
  const rel = relative(knowledgeRoot, path).split(sep).join('/');
  const dirType = ENTRY_TYPES.find((t) => rel.startsWith(`${TYPE_DIR[t]}/`));
  const id = asString(fm.id) || ID_IN_NAME.exec(path.split(sep).pop() ?? '')?.[1] || '';
  const request = asString(fm.request);
  if (!doc.opened) problems.push({ path, line: 1, reason: 'no frontmatter (expected a --- block with id and request)' });
  if (!id) problems.push({ path, line: 1, reason: 'missing id' });
  else if (doc.opened && !asString(fm.id) && !mistyped.has('id')) problems.push({ path, line: 1, reason: `missing id in frontmatter (the filename gives ${id})` });
  if (doc.opened && !request && !mistyped.has('request')) problems.push({ path, line: 1, reason: 'missing request' });
  if (!id || !request) return { entry: null, problems };
  const typeField = asString(fm.type);
  const type: EntryType = dirType ?? ((ENTRY_TYPES as readonly string[]).includes(typeField) ? (typeField as EntryType) : 'context');
  const parts = sections(doc.body);
  const title = /^#\s+(.+)$/m.exec(doc.body)?.[1]?.trim() ?? request;
  const summary = parts.get('摘要') ?? parts.get('核心结论') ?? parts.get('问题/摘要') ?? parts.get('Summary') ?? '';
  const sourcesRaw = Array.isArray(fm.sources) ? fm.sources : [];
  const confidence = typeof fm.extraction_confidence === 'number' ? fm.extraction_confidence : 0;
  const facet = asString(fm.facet);
  return {
    entry: {
      id,
      slug: asString(fm.slug) || rel.split('/').pop()!.replace(/\.md$/, '').replace(ID_IN_NAME, ''),
      request,
      type,
      ...(facet ? { facet: facet as Facet } : {}),
      tags: asTags(fm.tags),
      ...(asString(fm.created) ? { created: asString(fm.created) } : {}),
      ...(asString(fm.updated) ? { updated: asString(fm.updated) } : {}),
      version: entryVersion(fm.version),
      status: asString(fm.status) || 'draft',
      ...(asString(fm.intent_key) ? { intentKey: asString(fm.intent_key) } : {}),
      source: asSource(fm.source),
      sources: sourcesRaw.map((s) => ({ ...asSource(s), ...(s && typeof s === 'object' && !Array.isArray(s) && asString(s.saved_at) ? { savedAt: asString(s.saved_at) } : {}) })),
      confidence,
      title,
      summary,
      body: doc.body,
      path,
      relativePath: rel,
      mtimeMs: stat.mtimeMs,
      size: stat.size,
    },
    problems,
  };
}

/** Every `.md` under contexts/, entities/, summaries/ (recursively), with its stat. */
export function listEntryFiles(wikiRoot: string): Array<{ path: string; mtimeMs: number; size: number }> {
  const knowledge = wikiLayout(wikiRoot).knowledge;
  const out: Array<{ path: string; mtimeMs: number; size: number }> = [];
  const walk = (dir: string): void => {
    let names: import('node:fs').Dirent[];
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (d.isFile() && d.name.endsWith('.md') && !d.name.startsWith('.')) {
        try {
          const st = statSync(p);
          out.push({ path: p, mtimeMs: st.mtimeMs, size: st.size });
        } catch {
          // removed while walking
        }
      }
    }
  };
  for (const t of ENTRY_TYPES) walk(join(knowledge, TYPE_DIR[t]));
  return out;
}

/** listEntryFiles without blocking the event loop (the retriever's background rescan). */
export async function listEntryFilesAsync(wikiRoot: string): Promise<Array<{ path: string; mtimeMs: number; size: number }>> {
  const knowledge = wikiLayout(wikiRoot).knowledge;
  const out: Array<{ path: string; mtimeMs: number; size: number }> = [];
  const walk = async (dir: string): Promise<void> => {
    let names: import('node:fs').Dirent[];
    try {
      names = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    await Promise.all(
      names.map(async (d) => {
        const p = join(dir, d.name);
        if (d.isDirectory()) return walk(p);
        if (!d.isFile() || !d.name.endsWith('.md') || d.name.startsWith('.')) return;
        try {
          const st = await stat(p);
          out.push({ path: p, mtimeMs: st.mtimeMs, size: st.size });
        } catch {
          // removed while walking
        }
      }),
    );
  };
  for (const t of ENTRY_TYPES) await walk(join(knowledge, TYPE_DIR[t]));
  return out;
}

export function listWikiEntries(wikiRoot: string): { entries: WikiEntry[]; problems: WikiProblem[] } {
  const knowledge = wikiLayout(wikiRoot).knowledge;
  const entries: WikiEntry[] = [];
  const problems: WikiProblem[] = [];
  for (const f of listEntryFiles(wikiRoot)) {
    let text: string;
    try {
      text = readFileSync(f.path, 'utf8');
    } catch (err) {
      problems.push({ path: f.path, line: 0, reason: `unreadable: ${(err as Error).message}` });
      continue;
    }
    const parsed = parseEntryFile(f.path, knowledge, text, f);
    problems.push(...parsed.problems);
    if (parsed.entry) entries.push(parsed.entry);
  }
  return { entries, problems };
}

/** A wiki entry as a plain document, the shape the knowledge search index ingests. */
export interface WikiDocument {
  id: string;
  title: string;
  body: string;
  tags: string[];
  path: string;
  relativePath: string;
  type: EntryType;
  request: string;
  slug: string;
  status: string;
  intentKey?: string;
  updated?: string;
}

export function listWikiDocuments(wikiRoot: string): WikiDocument[] {
  return listWikiEntries(wikiRoot).entries.map((e) => ({
    id: e.id,
    title: e.title,
    body: e.body,
    tags: e.tags,
    path: e.path,
    relativePath: e.relativePath,
    type: e.type,
    request: e.request,
    slug: e.slug,
    status: e.status,
    ...(e.intentKey ? { intentKey: e.intentKey } : {}),
    ...(e.updated ? { updated: e.updated } : {}),
  }));
}

/** Next id for a type: max existing number + 1, 3-digit pad; entities also count `id: N###` lines in notes. */
export function allocateEntryId(wikiRoot: string, type: EntryType, entries?: readonly WikiEntry[]): string {
  const prefix = TYPE_PREFIX[type];
  let max = 0;
  const see = (id: string): void => {
    const m = new RegExp(`^${prefix}(\\d{3,})$`).exec(id);
    if (m) max = Math.max(max, Number(m[1]));
  };
  for (const f of listEntryFiles(wikiRoot)) see(ID_IN_NAME.exec(f.path.split(sep).pop() ?? '')?.[1] ?? '');
  for (const e of entries ?? []) see(e.id);
  if (prefix === 'N') {
    const notes = wikiLayout(wikiRoot).notes;
    if (existsSync(notes)) {
      // Regular files only, as listEntryFiles reads them: a folder named x.md failed the allocation (EISDIR), a FIFO hung it.
      for (const d of readdirSync(notes, { withFileTypes: true })) {
        if (!d.name.endsWith('.md') || !d.isFile()) continue;
        for (const m of readFileSync(join(notes, d.name), 'utf8').matchAll(/^id:\s*"?(N\d{3,})"?\s*$/gm)) see(m[1]!);
      }
    }
  }
  return `${prefix}${String(max + 1).padStart(3, '0')}`;
}

/** Splits a markdown body into `## ` sections (heading text → content). */
export function sections(body: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | null = null;
  let buf: string[] = [];
  for (const line of body.split('\n')) {
    const m = /^##\s+(.+?)\s*$/.exec(line);
    if (m) {
      if (current !== null) out.set(current, buf.join('\n').trim());
      current = m[1]!;
      buf = [];
    } else if (current !== null) buf.push(line);
  }
  if (current !== null) out.set(current, buf.join('\n').trim());
  return out;
}
