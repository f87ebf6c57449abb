/**
 * The built-in sources (specs and knowhow in every scope) and `loadCorpus`,
 * the single reader every consumer uses. Identity is decided here and nowhere
 * else (FORMATS §1.6, §2.2).
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { assertReadInside } from './linkGuard.js';
import { parseKnowhowText } from './knowhowParser.js';
import { knowhowDirs, listKnowhowFiles, listSpecFiles, readableIn, specDirs, type SpecDir, type WorkflowRoot } from './root.js';
import { frontmatterKeywords, MAX_SPEC_FILE_BYTES, parseSpecText, type Finding, type SpecEntry } from './specParser.js';
import { decodeEntities, slugify } from './text.js';
import type { KnowledgeEntry, KnowledgeSource, SourceFile } from './entry.js';

/**
 * `outside`: listed links that are not read. They get a stamp no stat gives (-1), so an index made before links
 * out were refused reads them again (to their finding, no entries) even where the file they lead to is unchanged.
 */
function statFiles(paths: string[], outside: ReadonlySet<string> = new Set()): SourceFile[] {
  const out: SourceFile[] = [];
  for (const p of paths) {
    if (outside.has(p)) {
      out.push({ path: p, mtimeMs: -1, size: -1 });
      continue;
    }
    // Vanished between listing and stat (undefined, without building an error), or unreadable:
    // simply not there. This loop runs over every file on each cold CLI search.
    try {
      const st = statSync(p, { throwIfNoEntry: false });
      if (st) out.push({ path: p, mtimeMs: st.mtimeMs, size: st.size });
    } catch {
      // not there for us
    }
  }
  return out;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * A knowhow file larger than a spec file may be (MAX_SPEC_FILE_BYTES), said as its finding without reading it. It
 * had no limit: a repository's 200 MB document was read whole into the index, which agents and the board search
 * (20 MB took 2 s of a sync, on the daemon's event loop).
 */
function tooLarge(path: string): Finding | null {
  const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  if (size <= MAX_SPEC_FILE_BYTES) return null;
  return { file: path, line: 1, severity: 'error', code: 'file-too-large', message: `file is ${size} bytes, over the ${MAX_SPEC_FILE_BYTES}-byte limit; not indexed` };
}

/**
 * A spec or knowhow file that is a symbolic link is read only when it leads inside the folder it belongs to (the
 * project's, its linked workspace's, the global specs'); one that leads out is not read, and said as the file's
 * finding instead of being skipped without a word. By every reader, confined or not: what one reads goes into the
 * project's index file, which agents read, and a link to $MAESTRO_HOME/token or /proc/self/environ followed by a
 * `maestro search` in the project would have put the daemon's token or the shell's environment there.
 */
function linkedOut(root: WorkflowRoot, dir: { dir: string; workspace: string | null; scope?: string }, path: string): Finding | null {
  const [base, what] = dir.scope === 'global' ? [dir.dir, 'the global spec folder'] : dir.workspace === null ? [root.projectDir, 'the project'] : [dirname(dirname(dir.dir)), 'the linked workspace'];
  try {
    assertReadInside(base, path, `${what} ${base}`);
    return null;
  } catch (err) {
    return { file: path, line: 1, severity: 'error', code: 'link-outside', message: err instanceof Error ? err.message : String(err) };
  }
}

/** The listed links that are not read (linkedOut). */
function outsideOf(root: WorkflowRoot, links: string[], dirOf: (path: string) => { dir: string; workspace: string | null; scope?: string } | undefined): Set<string> {
  return new Set(links.filter((p) => {
    const dir = dirOf(p);
    return dir !== undefined && linkedOut(root, dir, p) !== null;
  }));
}

/** NNN: 1-based, padded to 3 (1000+ → 4 digits), FORMATS §1.6. */
export function ordinalSuffix(n: number): string {
  return String(n).padStart(3, '0');
}

export function specEntryId(dir: Pick<SpecDir, 'idPrefix'>, file: string, ordinal: number): string {
  return `${dir.idPrefix}${slugify(basename(file, '.md'))}-${ordinalSuffix(ordinal)}`;
}

export function specFileId(dir: Pick<SpecDir, 'idPrefix'>, file: string): string {
  return `${dir.idPrefix}${slugify(basename(file, '.md'))}`;
}

export function specToEntry(dir: SpecDir, file: string, fileCategory: string | undefined, fmKeywords: string[], fmLines: number, e: SpecEntry): KnowledgeEntry {
  const id = specEntryId(dir, file, e.ordinal);
  const name = basename(file);
  const aliases = new Set<string>();
  if (e.sid) {
    aliases.add(e.sid);
    aliases.add(`spec:${e.sid}`);
  } else if (dir.scope === 'project') {
    // Reconciliation identity for entries without a sid (FORMATS §1.6).
    aliases.add(`legacy:${name}:${e.lineStart}`);
  }
  if (dir.scope === 'project') aliases.add(`${name}:${e.lineStart - fmLines}`); // keyword-index identity
  const tags = [...new Set([...e.keywords, ...(e.form === 'legacy' ? fmKeywords : [])])];
  return {
    id,
    graphId: id,
    aliases: [...aliases].filter((a) => a !== id),
    kind: 'spec',
    scope: dir.scope,
    workspace: dir.workspace,
    type: 'spec',
    category: e.category ?? fileCategory ?? null,
    tags,
    title: decodeEntities(e.title) || `${name} entry ${e.ordinal}`,
    summary: decodeEntities(e.description ?? ''),
    body: e.content,
    declaredStatus: e.status,
    storedStatus: e.attrs.status ? e.attrs.status.toLowerCase() : undefined,
    confidence: e.confidence ?? null,
    date: e.date ?? null,
    file,
    line: e.lineStart,
    family: specFileId(dir, file),
    sid: e.sid ?? null,
    supersedes: e.supersedes.map(decodeEntities),
    supersededBy: e.supersededBy ? decodeEntities(e.supersededBy) : null,
    related: [],
    references: e.ref ? [decodeEntities(e.ref)] : [],
  };
}

export function specSource(root: WorkflowRoot): KnowledgeSource {
  const dirs = specDirs(root);
  const dirOf = (path: string) => dirs.filter((d) => path.startsWith(d.dir + '/') && !path.slice(d.dir.length + 1).includes('/'))[0];
  return {
    name: 'spec',
    // The global scope is asked for by name; any other folder is read only where it lies inside its own on disk (readableIn).
    listFiles: () => {
      const links: string[] = [];
      const files = dirs.flatMap((d) => (d.scope === 'global' || readableIn(root, d) ? listSpecFiles(d.dir, links) : []));
      return statFiles(files, outsideOf(root, links, dirOf));
    },
    readFile(path) {
      const dir = dirOf(path);
      const out = dir && linkedOut(root, dir, path);
      if (out) return { entries: [], findings: [out] };
      const text = readText(path);
      if (!dir || text === null) return { entries: [], findings: [] };
      const parsed = parseSpecText(text, path);
      const kw = frontmatterKeywords(parsed.frontmatter);
      const entries = parsed.entries.map((e) => specToEntry(dir, path, parsed.category, kw, parsed.frontmatter.lineCount, e));
      return { entries, findings: parsed.findings };
    },
  };
}

export function knowhowSource(root: WorkflowRoot): KnowledgeSource {
  const dirs = knowhowDirs(root);
  return {
    name: 'knowhow',
    listFiles: () => {
      const links: string[] = [];
      const files = dirs.flatMap((d) => (readableIn(root, d) ? listKnowhowFiles(d.dir, links) : []));
      return statFiles(files, outsideOf(root, links, (path) => dirs.find((d) => path.startsWith(d.dir + '/'))));
    },
    readFile(path) {
      const dir = dirs.find((d) => path.startsWith(d.dir + '/'));
      const out = dir && (linkedOut(root, dir, path) ?? tooLarge(path));
      if (out) return { entries: [], findings: [out] };
      const text = readText(path);
      if (!dir || text === null) return { entries: [], findings: [] };
      const doc = parseKnowhowText(text, path);
      const id = `${dir.idPrefix}${doc.id}`;
      const aliases = new Set<string>([doc.graphId, `knowhow:${doc.id}`, doc.stem, doc.stem.toLowerCase()]);
      if (doc.explicitId) {
        aliases.add(doc.explicitId);
        aliases.add(`knowhow:${doc.explicitId}`);
      }
      if (dir.idPrefix) aliases.add(doc.id);
      // Spec `ref` values point at knowhow files relative to `.workflow/` (FORMATS §1.4).
      if (!dir.workspace) aliases.add(`knowhow/${path.slice(dir.dir.length + 1)}`);
      aliases.delete(id);
      const entry: KnowledgeEntry = {
        id,
        graphId: `${dir.idPrefix}${doc.graphId}`,
        aliases: [...aliases],
        kind: 'knowhow',
        scope: dir.workspace ? 'workspace' : 'project',
        workspace: dir.workspace,
        type: doc.type,
        category: doc.category ?? null,
        tags: [...new Set([...doc.keywords, ...doc.tags].map((t) => t.toLowerCase()))],
        title: doc.title,
        summary: doc.description ?? '',
        body: doc.body,
        declaredStatus: doc.status,
        storedStatus: doc.lifecycle?.toLowerCase() ?? (doc.status === 'deprecated' ? storedOf(doc.frontmatter.data.status) : undefined),
        confidence: doc.confidence ?? null,
        date: doc.created ?? null,
        file: path,
        line: 1,
        family: id,
        sid: null,
        supersedes: doc.supersedes,
        supersededBy: doc.supersededBy ?? null,
        related: doc.related,
        references: doc.codePaths,
      };
      return { entries: [entry], findings: doc.findings };
    },
  };
}

export function builtinSources(root: WorkflowRoot): KnowledgeSource[] {
  return [specSource(root), knowhowSource(root)];
}

export interface Corpus {
  entries: KnowledgeEntry[];
  findings: Finding[];
}

/**
 * Reads every source straight from the files. The index is a projection of
 * exactly this; `spec health` and tests use it directly.
 */
export function loadCorpus(sources: KnowledgeSource[]): Corpus {
  const entries: KnowledgeEntry[] = [];
  const findings: Finding[] = [];
  for (const src of sources) {
    for (const f of src.listFiles()) {
      const r = src.readFile(f.path);
      entries.push(...r.entries);
      findings.push(...r.findings);
    }
  }
  return { entries, findings };
}

/**
 * Effective status: deprecated if the file says so, or if an active entry
 * names it in `supersedes` — the successor's `supersedes` is authoritative
 * (FORMATS §1.7), which is what makes a supersede interrupted between its two
 * file writes read as complete.
 */
export function effectiveDeprecated(entries: KnowledgeEntry[]): Set<string> {
  const byRef = new Map<string, string>();
  for (const e of entries) {
    byRef.set(e.id, e.id);
    for (const a of e.aliases) if (!byRef.has(a)) byRef.set(a, e.id);
  }
  const out = new Set<string>();
  for (const e of entries) if (e.declaredStatus === 'deprecated') out.add(e.id);
  for (const e of entries) {
    if (e.declaredStatus !== 'active') continue;
    for (const ref of e.supersedes) {
      const target = byRef.get(ref);
      if (target && target !== e.id) out.add(target);
    }
  }
  return out;
}

/** A frontmatter status word, lowercased, or undefined. */
function storedOf(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim().toLowerCase() : undefined;
}
