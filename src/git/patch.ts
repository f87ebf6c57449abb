/**
 * A change between two commits as the reviewer sees it: each file with its
 * status (renames detected), line counts and unified-diff hunks, parsed from
 * real `git diff` output. Large files are collapsed (no hunks) so one huge
 * generated file cannot stall the answer; asking for that one file returns it
 * whole unless it is beyond any sensible review (then it stays a placeholder).
 */
import { spawn } from 'node:child_process';
import { git } from './git.js';

export type FileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';

export interface DiffLine {
  kind: 'context' | 'add' | 'del';
  text: string;
  oldLine: number | null;
  newLine: number | null;
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

const STATUS: Record<string, FileStatus> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type_changed' };
const ZERO_SHA = /^0+$/;
// Output must not depend on the user's git configuration (prefixes, colours, external diff tools).
const DIFF_FLAGS = ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false'];
const DIFF_OPTS = ['--no-color', '--no-ext-diff', '--no-textconv', '-M'];

interface RawEntry {
  path: string;
  oldPath: string | null;
  status: FileStatus;
  blobs: string[];
}

/** `git diff --raw -z`: ":old_mode new_mode old_sha new_sha STATUS\0path\0[path2\0]". */
function parseRaw(out: string): RawEntry[] {
  const parts = out.split('\0');
  const entries: RawEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const meta = parts[i]!;
    if (!meta.startsWith(':')) continue;
    const [, , oldSha, newSha, code] = meta.slice(1).split(' ');
    const letter = code![0]!;
    const status = STATUS[letter] ?? 'modified';
    if (letter === 'R' || letter === 'C') {
      entries.push({ oldPath: parts[i + 1]!, path: parts[i + 2]!, status, blobs: [oldSha!, newSha!] });
      i += 2;
    } else {
      entries.push({ oldPath: null, path: parts[i + 1]!, status, blobs: [oldSha!, newSha!] });
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
  const { stdout } = await gitWithInput(cwd, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], wanted.join('\n') + '\n');
  for (const line of stdout.split('\n')) {
    const [sha, size] = line.split(' ');
    if (sha && size && /^\d+$/.test(size)) sizes.set(sha, Number(size));
  }
  return sizes;
}

async function gitWithInput(cwd: string, args: string[], input: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve({ stdout }) : reject(new Error(`git ${args.join(' ')} failed in ${cwd} (exit ${code}): ${stderr.trim()}`))));
    child.stdin.end(input);
  });
}

/** Splits `git diff` patch output into one block per file, in output order. */
function splitPatch(patch: string): string[][] {
  const blocks: string[][] = [];
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) blocks.push([]);
    else if (blocks.length) blocks[blocks.length - 1]!.push(line);
  }
  return blocks;
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
    if (sign === '+') hunk.lines.push({ kind: 'add', text, oldLine: null, newLine: newLine++ });
    else if (sign === '-') hunk.lines.push({ kind: 'del', text, oldLine: oldLine++, newLine: null });
    else if (sign === ' ') hunk.lines.push({ kind: 'context', text, oldLine: oldLine++, newLine: newLine++ });
    // "\ No newline at end of file" and the trailing empty string carry no line.
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
  const [raw, num] = await Promise.all([
    git(cwd, [...DIFF_FLAGS, 'diff', '--raw', '-z', '--no-abbrev', ...DIFF_OPTS, ...range]),
    git(cwd, [...DIFF_FLAGS, 'diff', '--numstat', '-z', ...DIFF_OPTS, ...range]),
  ]);
  let entries = parseRaw(raw.stdout);
  if (options.file !== undefined) entries = entries.filter((e) => e.path === options.file || e.oldPath === options.file);
  const stats = parseNumstat(num.stdout);
  const sizes = await blobSizes(cwd, entries.flatMap((e) => e.blobs));
  const files: DiffFile[] = entries.map((e) => {
    const s = stats.get(e.path) ?? { additions: 0, deletions: 0, binary: false };
    const bytes = Math.max(...e.blobs.map((b) => sizes.get(b) ?? 0));
    const lines = s.additions + s.deletions;
    const huge = bytes > PLACEHOLDER_BYTES || lines > PLACEHOLDER_LINES;
    const large = bytes > COLLAPSE_BYTES || lines > COLLAPSE_LINES;
    return { path: e.path, oldPath: e.oldPath, status: e.status, binary: s.binary, additions: s.additions, deletions: s.deletions, collapsed: huge || (large && options.file === undefined), hunks: [] };
  });
  const wanted = files.filter((f) => !f.binary && !f.collapsed);
  if (!wanted.length) return files;
  // One patch for the files that show hunks; renames need both paths in the pathspec to be detected again.
  const paths = [...new Set(wanted.flatMap((f) => (f.oldPath ? [f.oldPath, f.path] : [f.path])))];
  const patch = await git(cwd, [...DIFF_FLAGS, '--literal-pathspecs', 'diff', '--patch', '--unified=3', ...DIFF_OPTS, ...range, '--', ...paths]);
  const blocks = splitPatch(patch.stdout);
  const byKey = new Map(files.map((f) => [f.path, f]));
  // Blocks come in the same order as the raw listing restricted to `paths`; match each to its file by that order.
  const order = parseRawOrderFor(entries, new Set(paths));
  order.forEach((path, i) => {
    const f = byKey.get(path);
    if (f && !f.binary && !f.collapsed && blocks[i]) f.hunks = parseHunks(blocks[i]!);
  });
  return files;
}

/** The paths of the raw entries the restricted patch contains, in order. */
function parseRawOrderFor(entries: RawEntry[], paths: Set<string>): string[] {
  return entries.filter((e) => paths.has(e.path) && (!e.oldPath || paths.has(e.oldPath))).map((e) => e.path);
}
