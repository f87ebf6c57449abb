/**
 * A change between two commits as the reviewer sees it: each file with its
 * status (renames detected), line counts and unified-diff hunks, parsed from
 * real `git diff` output. Large files are collapsed (no hunks) so one huge
 * generated file cannot stall the answer; asking for that one file returns it
 * whole unless it is beyond any sensible review (then it stays a placeholder).
 */
import { git } from './git.js';

export type FileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';

export interface DiffLine {
  kind: 'context' | 'add' | 'del';
  text: string;
  oldLine: number | null;
  newLine: number | null;
  /** Set on the last line of a side that ends without a newline (git's "\ No newline at end of file"). */
  noNewline?: true;
}

export interface DiffHunk {
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export interface DiffFile {
  path: string;
  oldPath: string | null;
  status: FileStatus;
  /** Git's modes ('100644' file, '100755' executable, '120000' symlink, '160000' submodule); null on a side the file is absent from. */
  oldMode: string | null;
  newMode: string | null;
  binary: boolean;
  additions: number;
  deletions: number;
  /** True: hunks omitted because the change is large (see the limits below). */
  collapsed: boolean;
  hunks: DiffHunk[];
}

/** Collapsed in a whole-change listing: more changed lines or bigger blobs than these. */
export const COLLAPSE_LINES = 2000;
export const COLLAPSE_BYTES = 1024 * 1024;
/** A placeholder even when asked for by name. */
export const PLACEHOLDER_LINES = 50_000;
export const PLACEHOLDER_BYTES = 50 * 1024 * 1024;
/** What one patch may hold (both sides of every file counted); git()'s buffer is 64 MB. */
const PATCH_BUDGET_BYTES = 24 * 1024 * 1024;

const STATUS: Record<string, FileStatus> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type_changed' };
const ZERO_SHA = /^0+$/;
// Output must not depend on the user's git configuration (prefixes, colours, external diff tools).
const DIFF_FLAGS = ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false'];
const DIFF_OPTS = ['--no-color', '--no-ext-diff', '--no-textconv', '-M'];

interface RawEntry {
  path: string;
  oldPath: string | null;
  status: FileStatus;
  modes: [string | null, string | null];
  blobs: string[];
}

/** `git diff --raw -z`: ":old_mode new_mode old_sha new_sha STATUS\0path\0[path2\0]". */
function parseRaw(out: string): RawEntry[] {
  const parts = out.split('\0');
  const entries: RawEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) continue;
    const [oldMode, newMode, oldSha, newSha, code] = meta.slice(1).split(' ');
    const letter = code![0]!;
    const status = STATUS[letter] ?? 'modified';
    const modes: RawEntry['modes'] = [ZERO_SHA.test(oldMode!) ? null : oldMode!, ZERO_SHA.test(newMode!) ? null : newMode!];
    if (letter === 'R' || letter === 'C') {
      entries.push({ oldPath: parts[i + 1]!, path: parts[i + 2]!, status, modes, blobs: [oldSha!, newSha!] });
      i += 2;
    } else {
      entries.push({ oldPath: null, path: parts[i + 1]!, status, modes, blobs: [oldSha!, newSha!] });
      i += 1;
    }
  }
  return entries;
}

/** `git diff --numstat -z`: "a\td\tpath\0" or, for a rename, "a\td\t\0old\0new\0"; "-" counts mean binary. */
function parseNumstat(out: string): Map<string, { additions: number; deletions: number; binary: boolean }> {
  const parts = out.split('\0');
  const stats = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  for (let i = 0; i < parts.length; i++) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(parts[i]!);
    if (!m) continue;
    let path = m[3]!;
    if (path === '') {
      path = parts[i + 2]!;
      i += 2;
    }
    const binary = m[1] === '-';
    stats.set(path, { additions: binary ? 0 : Number(m[1]), deletions: binary ? 0 : Number(m[2]), binary });
  }
  return stats;
}

async function blobSizes(cwd: string, shas: string[]): Promise<Map<string, number>> {
  const wanted = [...new Set(shas.filter((s) => !ZERO_SHA.test(s)))];
  const sizes = new Map<string, number>();
  if (!wanted.length) return sizes;
  const { stdout } = await git(cwd, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], { input: wanted.join('\n') + '\n' });
  for (const line of stdout.split('\n')) {
    const [sha, size] = line.split(' ');
    if (sha && size && /^\d+$/.test(size)) sizes.set(sha, Number(size));
  }
  return sizes;
}

/** Splits `git diff` patch output into one block per file, in output order (the `diff --git` line first). */
function splitPatch(patch: string): string[][] {
  const blocks: string[][] = [];
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) blocks.push([line]);
    else if (blocks.length) blocks[blocks.length - 1]!.push(line);
  }
  return blocks;
}

/** A path as git prints it in a patch header: bare, or C-quoted ("a/tab\there", octal bytes) when it holds odd characters. */
export function unquotePath(text: string): string {
  if (!text.startsWith('"')) return text;
  const bytes: number[] = [];
  const escapes: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 1; i < text.length - 1; i++) {
    const c = text[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = text[i + 1]!;
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(text.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(escapes[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * The file a patch block is about (its new path; the old one for a deletion).
 * Blocks are matched to files by path, not position: a type change (a file
 * becoming a symlink) is printed as two blocks for one file.
 */
function blockPath(block: string[]): string | null {
  // git ends a ---/+++ name holding a space with a tab (for patch(1)); a quoted name has none.
  const strip = (p: string) => unquotePath(p.replace(/\t$/, '')).replace(/^[ab]\//, '');
  const plus = block.find((l) => l.startsWith('+++ '));
  if (plus && plus !== '+++ /dev/null') return strip(plus.slice(4));
  const minus = block.find((l) => l.startsWith('--- '));
  if (minus && minus !== '--- /dev/null') return strip(minus.slice(4));
  const moved = block.find((l) => l.startsWith('rename to ') || l.startsWith('copy to '));
  if (moved) return unquotePath(moved.slice(moved.indexOf(' to ') + 4));
  // No content lines (a mode change, a binary file): `diff --git a/P b/P`, both halves the same.
  const header = block[0]!.slice('diff --git '.length);
  if (header.startsWith('"')) {
    const end = header.indexOf('" "');
    return end > 0 ? strip(header.slice(end + 2)) : null;
  }
  const half = (header.length - 1) / 2;
  return Number.isInteger(half) ? header.slice(half + 1).replace(/^b\//, '') : null;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export function parseHunks(block: string[]): DiffHunk[] {
  const hunks: DiffHunk[] = [];
  let hunk: DiffHunk | null = null;
  let oldLine = 0;
  let newLine = 0;
  for (const line of block) {
    const m = HUNK.exec(line);
    if (m) {
      hunk = { header: line, oldStart: Number(m[1]), oldLines: m[2] === undefined ? 1 : Number(m[2]), newStart: Number(m[3]), newLines: m[4] === undefined ? 1 : Number(m[4]), lines: [] };
      hunks.push(hunk);
      oldLine = hunk.oldStart;
      newLine = hunk.newStart;
      continue;
    }
    if (!hunk) continue; // file header lines (index, ---, +++, rename from, Binary files ...)
    const sign = line[0];
    const text = line.slice(1);
    if (sign === '\\') {
      // "\ No newline at end of file": the line before it ends its side (both, for a context line) without one.
      const last = hunk.lines[hunk.lines.length - 1];
      if (last) last.noNewline = true;
      continue;
    }
    if (sign === '+') hunk.lines.push({ kind: 'add', text, oldLine: null, newLine: newLine++ });
    else if (sign === '-') hunk.lines.push({ kind: 'del', text, oldLine: oldLine++, newLine: null });
    else if (sign === ' ') hunk.lines.push({ kind: 'context', text, oldLine: oldLine++, newLine: newLine++ });
  }
  return hunks;
}

export interface PatchOptions {
  /** Only this file (its new or old path); its hunks are returned even when it would be collapsed. */
  file?: string;
}

/** The change from `base` to `head` (both commits), files in git's order. */
export async function readPatch(cwd: string, base: string, head: string, options: PatchOptions = {}): Promise<DiffFile[]> {
  const range = [base, head];
  const all = parseRaw((await git(cwd, [...DIFF_FLAGS, 'diff', '--raw', '-z', '--no-abbrev', ...DIFF_OPTS, ...range])).stdout);
  const entries = options.file === undefined ? all : all.filter((e) => e.path === options.file || e.oldPath === options.file);
  if (!entries.length) return [];
  const sizes = await blobSizes(cwd, entries.flatMap((e) => e.blobs));
  const bytes = (e: RawEntry) => Math.max(...e.blobs.map((b) => sizes.get(b) ?? 0));
  // Files too big to diff here are left out of the patch (and counted on their own below).
  const limit = options.file === undefined ? COLLAPSE_BYTES : PLACEHOLDER_BYTES;
  const big = new Set(entries.filter((e) => bytes(e) > limit));
  // And the whole patch stays well under git()'s output buffer: the largest files collapse first.
  let total = entries.reduce((n, e) => n + (big.has(e) ? 0 : 2 * bytes(e)), 0);
  for (const e of [...entries].sort((a, b) => bytes(b) - bytes(a))) {
    if (total <= PATCH_BUDGET_BYTES) break;
    if (big.has(e)) continue;
    big.add(e);
    total -= 2 * bytes(e);
  }
  const shown = entries.filter((e) => !big.has(e));
  const files = new Map<RawEntry, DiffFile>(entries.map((e) => [e, { path: e.path, oldPath: e.oldPath, status: e.status, oldMode: e.modes[0], newMode: e.modes[1], binary: false, additions: 0, deletions: 0, collapsed: false, hunks: [] }]));
  const spec = (list: RawEntry[]) => list.flatMap((e) => (e.oldPath ? [e.oldPath, e.path] : [e.path]));
  if (shown.length) {
    // One patch for every file that is not too big: the whole change, or only the files asked for.
    const pathspec = options.file !== undefined ? spec(shown).map((p) => `:(literal)${p}`) : big.size ? ['.', ...spec([...big]).map((p) => `:(exclude,literal)${p}`)] : [];
    const patch = await git(cwd, [...DIFF_FLAGS, 'diff', '--patch', '--unified=3', '--src-prefix=a/', '--dst-prefix=b/', ...DIFF_OPTS, ...range, ...(pathspec.length ? ['--', ...pathspec] : [])]);
    const byPath = new Map<string, string[][]>();
    for (const block of splitPatch(patch.stdout)) {
      const path = blockPath(block);
      if (path !== null) byPath.set(path, [...(byPath.get(path) ?? []), block]);
    }
    for (const e of shown) {
      const f = files.get(e)!;
      const blocks = byPath.get(e.path) ?? [];
      f.binary = blocks.some((b) => b.some((l) => l.startsWith('Binary files ') || l === 'GIT binary patch'));
      const hunks = f.binary ? [] : blocks.flatMap(parseHunks);
      for (const h of hunks) for (const l of h.lines) l.kind === 'add' ? f.additions++ : l.kind === 'del' ? f.deletions++ : 0;
      const lines = f.additions + f.deletions;
      f.collapsed = lines > PLACEHOLDER_LINES || (options.file === undefined && lines > COLLAPSE_LINES);
      f.hunks = f.collapsed ? [] : hunks;
    }
  }
  if (big.size) {
    const stats = parseNumstat((await git(cwd, [...DIFF_FLAGS, 'diff', '--numstat', '-z', ...DIFF_OPTS, ...range, '--', ...spec([...big]).map((p) => `:(literal)${p}`)])).stdout);
    for (const e of big) Object.assign(files.get(e)!, stats.get(e.path) ?? {}, { collapsed: true, hunks: [] });
  }
  return entries.map((e) => files.get(e)!);
}
