/**
 * The observer's wiki (FORMATS §8) as a knowledge source: every entry under
 * `wiki/knowledge/{contexts,entities,summaries}/` becomes a `KnowledgeEntry`
 * of kind `wiki`, indexed, filtered, ranked and diversified like specs and
 * knowhow (same FTS5 table, FORMATS §5.1 field weights: title = the entry's
 * `# ` heading, summary = `## 摘要` (else the request), tags = tags + facet,
 * body = the markdown body).
 *
 * Identity: `wiki:<ID>` (C### / N### / S###) is canonical and the graph id;
 * the bare ID, `<ID>-<slug>`, the slug, and the path relative to
 * `wiki/knowledge/` (also with a `wiki/knowledge/` prefix) are aliases, plus
 * any `aliases:` the file declares. Parsing is the one wiki entry reader
 * (format/wiki/entries.ts, which the observer also uses), so there is still one parser per format.
 *
 * Where the wiki is (FORMATS §8.1 order): confined to a `--workflow-root`,
 * only `<project>/wiki` is read, so a FLOW_* variable cannot pull another
 * project's wiki in; otherwise FLOW_WIKI_DIR → FLOW_ROOT_DIR/wiki →
 * FLOW_PROJECT_DIR/wiki → `<project>/wiki`.
 */
import { wikiDirFromEnv } from '../../config/env.js';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { listEntryFiles, parseEntryFile } from './wiki/entries.js';
import { parseFrontmatter, type FrontValue } from './frontmatter.js';
import { wikiLayout } from './wiki/layout.js';
import type { KnowledgeEntry, KnowledgeSource } from './entry.js';
import type { WorkflowRoot } from './root.js';
import { MAX_SPEC_FILE_BYTES, type Finding } from './specParser.js';

export const WIKI_ID_PREFIX = 'wiki:';
/** The spec files' size guard (MAX_SPEC_FILE_BYTES): a wiki entry is a page, not a dump. */
export const MAX_WIKI_FILE_BYTES = MAX_SPEC_FILE_BYTES;

/** The wiki folder for a workflow root (see the header for the order). */
export function wikiRootFor(root: WorkflowRoot, env: NodeJS.ProcessEnv): string {
  return (root.confined ? undefined : wikiDirFromEnv(env, root.projectDir)) ?? resolve(root.projectDir, 'wiki');
}

function strings(v: FrontValue | undefined): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string | number => typeof x === 'string' || typeof x === 'number').map(String).filter(Boolean);
  if (typeof v === 'string' && v.trim()) return v.split(',').map((s) => s.trim()).filter(Boolean);
  return [];
}

const ID_IN_NAME = /^([CNS]\d{3,})-/;

type WikiEntry = NonNullable<ReturnType<typeof parseEntryFile>['entry']>;
type ReadResult = ReturnType<KnowledgeSource['readFile']>;

export function wikiSource(wikiRoot: string): KnowledgeSource {
  const knowledge = wikiLayout(wikiRoot).knowledge;
  /** Files whose filename id an earlier file (in path order) already has: path → that file. */
  let shadowedBy = new Map<string, string>();
  return {
    name: 'wiki',
    listFiles() {
      const files = listEntryFiles(wikiRoot).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      shadowedBy = shadowing(files);
      // A shadowed file reports its mtime + 0.5 ms, so the index re-reads it whenever it becomes or stops
      // being shadowed (its id changes with that, not with its content); shadowed files come first, so
      // their old rows are gone before the owner claims the id in the same sync.
      return [...files.filter((f) => shadowedBy.has(f.path)).map((f) => ({ ...f, mtimeMs: f.mtimeMs + 0.5 })), ...files.filter((f) => !shadowedBy.has(f.path))];
    },
    readFile(path) {
      const read = readWikiText(path);
      if ('refused' in read) return read.refused;
      const { text, st } = read;
      const { entry, problems } = parseEntryFile(path, knowledge, text, st);
      const findings: Finding[] = problems.map((p) => ({
        file: p.path,
        line: Math.max(1, p.line),
        // A problem that cost the entry is an error; one the reader worked around is a warning.
        severity: entry ? 'warning' : 'error',
        code: entry ? 'wiki-entry-warning' : 'wiki-entry-unreadable',
        message: p.reason,
      }));
      if (!entry) return { entries: [], findings };
      const fm = parseFrontmatter(text, { dialect: 'wiki' }).data;
      const stem = entry.relativePath.split('/').pop()!.replace(/\.md$/, '');
      // Two files with one id (a hand copy, a merge): both stay indexed, the later one under its stem, and health says so.
      const owner = shadowedBy.get(path);
      if (owner) findings.push({ file: path, line: 1, severity: 'error', code: 'wiki-duplicate-id', message: `id ${entry.id} is also used by ${owner}; this entry is indexed as ${WIKI_ID_PREFIX}${stem}` });
      return { entries: [knowledgeEntryOf(path, entry, fm, stem, owner)], findings };
    },
  };
}

/** Files (in path order) whose filename id an earlier file already has: path → that earlier file. */
function shadowing(files: Array<{ path: string }>): Map<string, string> {
  const first = new Map<string, string>();
  const shadowedBy = new Map<string, string>();
  for (const f of files) {
    const id = ID_IN_NAME.exec(f.path.split('/').pop() ?? '')?.[1];
    if (!id) continue;
    const owner = first.get(id);
    if (owner) shadowedBy.set(f.path, owner);
    else first.set(id, f.path);
  }
  return shadowedBy;
}

/** The file's text and stat, or the result that refuses it (too large, unreadable, binary). */
function readWikiText(path: string): { text: string; st: { mtimeMs: number; size: number } } | { refused: ReadResult } {
  let text: string;
  let st: { mtimeMs: number; size: number };
  try {
    const s = statSync(path);
    st = { mtimeMs: s.mtimeMs, size: s.size };
    if (s.size > MAX_WIKI_FILE_BYTES) return { refused: { entries: [], findings: [{ file: path, line: 1, severity: 'error', code: 'file-too-large', message: `file is ${s.size} bytes, over the ${MAX_WIKI_FILE_BYTES}-byte limit; not indexed` }] } };
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { refused: { entries: [], findings: [{ file: path, line: 1, severity: 'error', code: 'wiki-unreadable', message: `unreadable: ${(err as Error).message}` }] } };
  }
  if (text.includes('\u0000')) return { refused: { entries: [], findings: [{ file: path, line: 1, severity: 'error', code: 'wiki-binary', message: 'binary content (NUL bytes); not a wiki entry' }] } };
  return { text, st };
}

/** A parsed wiki entry as a `KnowledgeEntry`; a shadowed entry (`owner` set) is indexed under its stem. */
function knowledgeEntryOf(path: string, entry: WikiEntry, fm: Record<string, FrontValue>, stem: string, owner: string | undefined): KnowledgeEntry {
  const rel = entry.relativePath;
  const id = owner ? `${WIKI_ID_PREFIX}${stem}` : `${WIKI_ID_PREFIX}${entry.id}`;
  const aliases = new Set<string>([...(owner ? [] : [entry.id]), `${WIKI_ID_PREFIX}${stem}`, stem, stem.toLowerCase(), rel, `wiki/knowledge/${rel}`, ...strings(fm.aliases)]);
  if (entry.slug) aliases.add(`${WIKI_ID_PREFIX}${entry.slug}`);
  aliases.delete(id);
  const status = entry.status.toLowerCase();
  const tags = [...new Set([...entry.tags, ...(entry.facet ? [entry.facet] : [])].map((t) => t.toLowerCase()))];
  return {
    id,
    graphId: id,
    aliases: [...aliases],
    kind: 'wiki',
    scope: 'wiki',
    workspace: null,
    type: entry.type,
    // The intent key groups contexts (contexts/<intent_key>/…); it is the wiki's category.
    category: entry.intentKey ?? (entry.type === 'context' && rel.split('/').length > 2 ? rel.split('/')[1]! : null),
    tags,
    title: entry.title,
    summary: entry.summary.trim() || entry.request,
    body: entry.body,
    declaredStatus: status === 'deprecated' || status === 'superseded' || status === 'archived' ? 'deprecated' : 'active',
    storedStatus: status || undefined,
    confidence: entry.confidence > 0 ? String(entry.confidence) : null,
    date: entry.updated ?? entry.created ?? null,
    file: path,
    line: 1,
    family: id,
    sid: null,
    supersedes: [],
    supersededBy: null,
    related: strings(fm.related).map((r) => (/^[CNS]\d{3,}$/.test(r) ? `${WIKI_ID_PREFIX}${r}` : r)),
    // `evolution_parent` names the entry this one grew out of: a reference, not a supersede.
    references: strings(fm.evolution_parent).map((p) => (/^[CNS]\d{3,}$/.test(p) ? `${WIKI_ID_PREFIX}${p}` : p)),
  };
}
