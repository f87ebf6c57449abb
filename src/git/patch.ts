/**
 * A change between two commits as the reviewer sees it: each file with its
 * status (renames detected), line counts and unified-diff hunks, parsed from
 * real `git diff` output. Large files are collapsed (no hunks) so one huge
 * generated file cannot stall the answer; asking for that one file returns it
 * whole unless it is beyond any sensible review (then it stays a placeholder).
 */
import { isUtf8 } from 'node:buffer';
import { git } from './git.js';
import { blobSizes } from './blobs.js';
import { binaryTextOf, binaryTexts, blobTextDiff, lineCounts, type GitBinaryText } from './binaryText.js';
import { gitName, listingSpecs, pathBytes, pathspecOf, sideName, unprintable, type GitName } from './gitNames.js';
import { linkTargets, SYMLINK_MODE, type LinkTarget } from './links.js';

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
  /** Set when git calls the file binary and it is shown as text all the same (binaryText.ts): why git does. */
  gitBinary?: GitBinaryText;
  additions: number;
  deletions: number;
  /** True: hunks omitted because the change is large (see the limits below). */
  collapsed: boolean;
  hunks: DiffHunk[];
  /** A symlink after the change (newMode 120000): where it points, and whether that is outside the repository (links.ts). */
  link: LinkTarget | null;
}

/** Collapsed in a whole-change listing: more changed lines or bigger blobs than these. */
export const COLLAPSE_LINES = 2000;
export const COLLAPSE_BYTES = 1024 * 1024;
/** A placeholder even when asked for by name. */
export const PLACEHOLDER_LINES = 50_000;
export const PLACEHOLDER_BYTES = 50 * 1024 * 1024;
/**
 * Lines drawn in one whole-change listing; the files after them come collapsed (?file= loads each). An agent's
 * 3,000 files of 2,000 blank lines (12 MB committed) drew 6 million: 21 s and 770 MB of heap, 327 MB of JSON.
 */
export const LISTING_LINES = 20_000;
/** What one patch may hold (both sides of every file counted); git()'s buffer is 64 MB. */
const PATCH_BUDGET_BYTES = 24 * 1024 * 1024;

const STATUS: Record<string, FileStatus> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type_changed' };
const ZERO_SHA = /^0+$/;
/** Settings git's diff must run with to show a change whole, whatever the configuration says (readPatch's, diffText's). */
export const DIFF_CONFIG = ['-c', 'diff.suppressBlankEmpty=false', '-c', 'core.bigFileThreshold=512m'];
/** Every gitlink listed, as its commit line ("Subproject commit <sha>"); no diff.orderFile (a FIFO there hung git). */
export const DIFF_WHOLE = ['--ignore-submodules=none', '--submodule=short', '-O/dev/null'];
// Output must not depend on the user's git configuration (prefixes, colours, external diff tools) nor the
// repository's, which an agent can write: diff.ignoreSubmodules=all hid a gitlink, diff.submodule=log its line,
// core.bigFileThreshold=1 made every file "binary", diff.suppressBlankEmpty shifted line numbers. Names come quoted
// past ASCII: read as UTF-8, `n\377.txt` and `n\376.txt` were one name, which showed both files' lines.
const DIFF_FLAGS = ['-c', 'core.quotePath=true', '-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false', ...DIFF_CONFIG];
const DIFF_OPTS = ['--no-color', '--no-ext-diff', '--no-textconv', ...DIFF_WHOLE, '-M'];

interface RawEntry {
  name: GitName;
  oldName: GitName | null;
  status: FileStatus;
  modes: [string | null, string | null];
  blobs: string[];
}

/** `git diff --raw`: ":old_mode new_mode old_sha new_sha STATUS\tpath[\tpath2]", a path quoted when it holds a tab, a newline or a byte past ASCII. */
function parseRaw(out: string): RawEntry[] {
  const entries: RawEntry[] = [];
  for (const line of out.split('\n')) {
    if (!line.startsWith(':')) continue;
    const [meta, ...paths] = line.split('\t');
    const [oldMode, newMode, oldSha, newSha, code] = meta!.slice(1).split(' ');
    const letter = code![0]!;
    const names = paths.map((p) => gitName(pathBytes(p)));
    const moved = letter === 'R' || letter === 'C';
    const modes: RawEntry['modes'] = [ZERO_SHA.test(oldMode!) ? null : oldMode!, ZERO_SHA.test(newMode!) ? null : newMode!];
    entries.push({ name: names[moved ? 1 : 0]!, oldName: moved ? names[0]! : null, status: STATUS[letter] ?? 'modified', modes, blobs: [oldSha!, newSha!] });
  }
  return entries;
}

/** `git diff --numstat -z`: "a\td\tpath\0" or, for a rename, "a\td\t\0old\0new\0"; "-" counts mean binary. Paths as UTF-8 (lossy). */
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

/** Splits `git diff` patch output into one block per file, in output order (the `diff --git` line first). */
function splitPatch(patch: string): string[][] {
  const blocks: string[][] = [];
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) blocks.push([line]);
    else if (blocks.length) blocks[blocks.length - 1]!.push(line);
  }
  return blocks;
}

/**
 * The file a patch block is about (its new path; the old one for a deletion).
 * Blocks are matched to files by name, not position: a type change (a file
 * becoming a symlink) is printed as two blocks for one file.
 */
function blockName(block: string[]): GitName | null {
  const plus = block.find((l) => l.startsWith('+++ '));
  if (plus && plus !== '+++ /dev/null') return sideName(plus.slice(4));
  const minus = block.find((l) => l.startsWith('--- '));
  if (minus && minus !== '--- /dev/null') return sideName(minus.slice(4));
  const moved = block.find((l) => l.startsWith('rename to ') || l.startsWith('copy to '));
  if (moved) return gitName(pathBytes(moved.slice(moved.indexOf(' to ') + 4)));
  // No content lines (a mode change, a binary file): `diff --git a/P b/P`, both halves the same.
  const header = block[0]!.slice('diff --git '.length);
  if (header.startsWith('"')) {
    const end = header.indexOf('" "');
    return end > 0 ? sideName(header.slice(end + 2)) : null;
  }
  const half = (header.length - 1) / 2;
  return Number.isInteger(half) ? sideName(header.slice(half + 1)) : null;
}

/** The name each file of a `git diff` patch is shown by, in its order (a file whose blocks follow each other, once). */
export function patchFileNames(patch: string): string[] {
  const names = splitPatch(patch).map((b) => blockName(b)?.shown ?? b[0]!.slice('diff --git '.length));
  return names.filter((n, i) => n !== names[i - 1]);
}

/** The old name a block pairs its file with ("rename from", "copy from"), or null. */
function pairedFrom(block: string[]): string | null {
  const from = block.find((l) => l.startsWith('rename from ') || l.startsWith('copy from ') || l.startsWith('@@'));
  return from && !from.startsWith('@@') ? gitName(pathBytes(from.slice(from.indexOf(' from ') + 6))).key : null;
}

const isBinaryBlock = (block: string[]) => block.some((l) => l.startsWith('Binary files ') || l === 'GIT binary patch');

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

const namesOf = (e: RawEntry) => (e.oldName ? [e.oldName, e.name] : [e.name]);

/** The files of `list` whose name (or old name) one of `names`' pathspecs takes in: by key and its folders, and each glob. */
function takenBy(list: RawEntry[], names: GitName[]): Set<RawEntry> {
  const exact = new Set(names.filter((n) => isUtf8(n.bytes)).map((n) => n.key));
  const globs = names.filter((n) => !isUtf8(n.bytes)).map((n) => pathspecOf(n, '').takes);
  const takes = (key: string) => globs.some((t) => t(key)) || [...key.matchAll(/\//g)].some((m) => exact.has(key.slice(0, m.index))) || exact.has(key);
  return new Set(list.filter((e) => namesOf(e).some((n) => takes(n.key))));
}

/**
 * The files left out of the patch (collapsed, counted on their own): bigger than `limit`, then the largest until the
 * patch fits its budget, `weight` bytes of other files (an odd name's glob takes them in) counted too.
 */
function leftOut(shown: RawEntry[], bytes: (e: RawEntry) => number, limit: number, weight = 0): Set<RawEntry> {
  const big = new Set(shown.filter((e) => bytes(e) > limit));
  let total = weight + shown.reduce((n, e) => n + (big.has(e) ? 0 : 2 * bytes(e)), 0);
  for (const e of [...shown].sort((a, b) => bytes(b) - bytes(a))) {
    if (total <= PATCH_BUDGET_BYTES) break;
    if (big.has(e)) continue;
    big.add(e);
    total -= 2 * bytes(e);
  }
  return big;
}

/** Added and deleted lines of blocks, without drawing them: the lines from their first hunk on. */
function changeCounts(blocks: string[][]): { additions: number; deletions: number } {
  const counts = { additions: 0, deletions: 0 };
  for (const b of blocks) for (let i = b.findIndex((l) => HUNK.test(l)); i >= 0 && i < b.length; i++) b[i]![0] === '+' ? counts.additions++ : b[i]![0] === '-' ? counts.deletions++ : 0;
  return counts;
}

/**
 * Each shown file's hunks, from the blocks whose name is its own (by bytes). A file whose blocks git did not pair
 * as its listing did (another rename), or that has none, is collapsed rather than shown wrong or empty; so are the
 * files of a whole listing past LISTING_LINES. A binary side (of a type change) hides only its own block.
 */
function fillHunks(shown: RawEntry[], files: Map<RawEntry, DiffFile>, blocks: string[][], whole: boolean): void {
  const byKey = new Map<string, string[][]>();
  for (const block of blocks) {
    const key = blockName(block)?.key;
    if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), block]);
  }
  let drawn = 0;
  for (const e of shown) {
    const f = files.get(e)!;
    const mine = byKey.get(e.name.key) ?? [];
    const text = mine.filter((b) => !isBinaryBlock(b));
    f.binary = text.length < mine.length;
    const paired = mine.every((b) => pairedFrom(b) === (e.oldName?.key ?? null));
    const size = text.reduce((n, b) => n + b.length, 0);
    if (!mine.length || !paired || (whole && drawn + size > LISTING_LINES)) {
      Object.assign(f, changeCounts(text), { collapsed: true, hunks: [] });
      continue;
    }
    const hunks = text.flatMap(parseHunks);
    for (const h of hunks) for (const l of h.lines) l.kind === 'add' ? f.additions++ : l.kind === 'del' ? f.deletions++ : 0;
    const lines = f.additions + f.deletions;
    f.collapsed = lines > PLACEHOLDER_LINES || (whole && lines > COLLAPSE_LINES);
    f.hunks = f.collapsed ? [] : hunks;
    if (!f.collapsed) drawn += size;
  }
}

/**
 * Which files go into the patch and with what pathspec. The whole change: every file but the big ones, excluded
 * by name (listingSpecs; what that excludes besides is left out too). One file: it by name (a glob when it is not
 * UTF-8: the other files that takes in count against the budget).
 */
function planPatch(all: RawEntry[], entries: RawEntry[], bytes: (e: RawEntry) => number, whole: boolean): { big: Set<RawEntry>; pathspec: string[]; opts: string[] } {
  if (whole) {
    const big = leftOut(entries, bytes, COLLAPSE_BYTES);
    // What the exclusions take in besides is left out too: every unprintable name with one that is not UTF-8, and
    // what lies under an excluded name (a file that became a folder).
    if ([...big].some((e) => namesOf(e).some((n) => !isUtf8(n.bytes)))) for (const e of entries) if (namesOf(e).some(unprintable)) big.add(e);
    for (let more = true; more; ) {
      const excluded = takenBy(entries, [...big].flatMap(namesOf).filter((n) => isUtf8(n.bytes)));
      more = [...excluded].some((e) => !big.has(e));
      for (const e of excluded) big.add(e);
    }
    return { big, pathspec: big.size ? ['.', ...listingSpecs([...big].flatMap(namesOf), 'exclude,')] : [], opts: DIFF_OPTS };
  }
  const others = [...takenBy(all, entries.flatMap(namesOf))].filter((e) => !entries.includes(e));
  const big = leftOut(entries, bytes, PLACEHOLDER_BYTES, others.reduce((n, e) => n + 2 * bytes(e), 0));
  // A file the listing did not pair stays unpaired: git would pair it with a file the glob took in (all of it unseen but what differs).
  const opts = others.length && entries.every((e) => !e.oldName) ? DIFF_OPTS.map((o) => (o === '-M' ? '--no-renames' : o)) : DIFF_OPTS;
  return { big, pathspec: entries.filter((e) => !big.has(e)).flatMap(namesOf).map((n) => pathspecOf(n, '').spec), opts };
}

/**
 * The files git calls binary that are text all the same, drawn as text (binaryText.ts), with the rules of
 * fillHunks: also a file the project marks `-diff` (a lockfile), which git's console diff leaves out as noise, and
 * whose change a person approving it must be able to read (a dependency's URL swapped).
 */
async function showBinaryText(cwd: string, binary: RawEntry[], files: Map<RawEntry, DiffFile>, whole: boolean): Promise<void> {
  const texts = await binaryTexts(cwd, binary.flatMap((e) => e.blobs));
  for (const e of binary) {
    const gitBinary = binaryTextOf(texts, e.blobs[0]!, e.blobs[1]!);
    if (!gitBinary) continue;
    const lines = await blobTextDiff(texts, e.blobs[0]!, e.blobs[1]!);
    const f = files.get(e)!;
    Object.assign(f, { binary: false, gitBinary }, lineCounts(lines));
    const hunks = parseHunks(lines);
    f.collapsed = f.additions + f.deletions > (whole ? COLLAPSE_LINES : PLACEHOLDER_LINES);
    f.hunks = f.collapsed ? [] : hunks;
  }
}

/** The change from `base` to `head` (both commits), files in git's order. */
export async function readPatch(cwd: string, base: string, head: string, options: PatchOptions = {}): Promise<DiffFile[]> {
  const range = [base, head];
  const whole = options.file === undefined;
  const all = parseRaw((await git(cwd, [...DIFF_FLAGS, 'diff', '--raw', '--no-abbrev', ...DIFF_OPTS, ...range])).stdout);
  const entries = whole ? all : all.filter((e) => e.name.shown === options.file || e.oldName?.shown === options.file);
  if (!entries.length) return [];
  const weighed = whole ? entries : [...entries, ...takenBy(all, entries.flatMap(namesOf))];
  const sizes = await blobSizes(cwd, weighed.flatMap((e) => e.blobs));
  const bytes = (e: RawEntry) => Math.max(...e.blobs.map((b) => sizes.get(b) ?? 0));
  const { big, pathspec, opts } = planPatch(all, entries, bytes, whole);
  // Read from their blobs, not their hunks: a collapsed file has none, and a target is one line with no newline.
  const links = await linkTargets(cwd, entries.filter((e) => e.modes[1] === SYMLINK_MODE).map((e) => ({ path: e.name.bytes, blob: e.blobs[1]! })));
  const files = new Map<RawEntry, DiffFile>(entries.map((e) => [e, { path: e.name.shown, oldPath: e.oldName?.shown ?? null, status: e.status, oldMode: e.modes[0], newMode: e.modes[1], binary: false, additions: 0, deletions: 0, collapsed: false, hunks: [], link: (e.modes[1] === SYMLINK_MODE && links.get(e.blobs[1]!)) || null }]));
  const shown = entries.filter((e) => !big.has(e));
  if (shown.length) {
    // One patch for every file that is not too big: the whole change, or only the files asked for.
    const patch = await git(cwd, [...DIFF_FLAGS, 'diff', '--patch', '--unified=3', '--src-prefix=a/', '--dst-prefix=b/', ...opts, ...range, ...(pathspec.length ? ['--', ...pathspec] : [])]);
    fillHunks(shown, files, splitPatch(patch.stdout), whole);
    await showBinaryText(cwd, shown.filter((e) => files.get(e)!.binary && e.status !== 'type_changed'), files, whole);
  }
  if (big.size) {
    // -z: names as UTF-8, lossy for a name that is not (two such names may share their counts).
    const specs = whole ? listingSpecs([...big].flatMap(namesOf), '') : [...big].flatMap(namesOf).map((n) => pathspecOf(n, '').spec);
    const stats = parseNumstat((await git(cwd, [...DIFF_FLAGS, 'diff', '--numstat', '-z', ...DIFF_OPTS, ...range, '--', ...specs])).stdout);
    for (const e of big) Object.assign(files.get(e)!, stats.get(e.name.bytes.toString('utf8')) ?? {}, { collapsed: true, hunks: [] });
  }
  return entries.map((e) => files.get(e)!);
}
