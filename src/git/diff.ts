/**
 * What a task branch changed relative to its base: files, lines, and the files
 * that fall outside the task's ownedFiles (the diff gate's inputs).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git } from './git.js';
import { blobSizes } from './blobs.js';
import { binaryTextOf, binaryTexts, blobTextDiff, lineCounts, showNuls } from './binaryText.js';
import { commonGitDir, gitdirPointer, nameOnDisk } from './onDisk.js';
import { DIFF_CONFIG, DIFF_WHOLE, patchFileNames } from './patch.js';

export interface DiffStats {
  files: string[];
  filesChanged: number;
  linesAdded: number;
  linesDeleted: number;
  /** Files changed that no ownedFiles pattern covers (empty when ownedFiles is empty: nothing declared, nothing to police). */
  outsideOwned: string[];
  /** Gitlinks the change adds or moves that `.gitmodules` at `head` does not declare (see strayGitlinksOf). */
  strayGitlinks: string[];
  /** Files the change adds larger than `maxFileBytes`, or grows past it (see largeFilesOf); empty without a limit. */
  largeFiles: Array<{ path: string; bytes: number }>;
}

/**
 * ownedFiles patterns: an exact path, a folder ending in "/", or a glob where
 * `*` matches within one path segment and `**` across segments.
 */
export function ownedMatcher(patterns: string[]): (file: string) => boolean {
  const tests = patterns.map((p) => {
    const pattern = p.replace(/^\.\//, '');
    if (pattern.endsWith('/')) return (f: string) => f.startsWith(pattern);
    if (!/[*?]/.test(pattern)) return (f: string) => f === pattern || f.startsWith(pattern + '/');
    const tokens = globTokens(pattern);
    return (f: string) => globMatches(tokens, f);
  });
  return (file) => tests.some((t) => t(file));
}

/** A glob's parts: a character as it is, `?` (one within a segment), `*` (within a segment), `**` (across), and `**` before a `/` (no folder, or any folders). */
type GlobToken = { kind: 'char'; c: string } | { kind: 'one' | 'segment' | 'any' | 'folders' };

function globTokens(pattern: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      tokens.push({ kind: pattern[i + 2] === '/' ? 'folders' : 'any' });
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') tokens.push({ kind: 'segment' });
    else if (c === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', c });
  }
  return tokens;
}

/** What `**` spans, as the regular expression `.*` did: any character but a line break. */
const LINE_BREAK = new Set(['\n', '\r', '\u2028', '\u2029']);

/**
 * Whether `file` matches the glob, in time proportional to the glob's length times the path's. A regular
 * expression (`**` as `.*`) backtracked: a glob of many `**` (`**a**a**a…!`, from a person or a planner's
 * subtask) took minutes per changed file in the diff gate, and hours a few `**` later.
 */
function globMatches(tokens: GlobToken[], file: string): boolean {
  const n = file.length;
  // at[i]: the glob's tokens so far can end at position i of the path.
  let at = new Array<boolean>(n + 1).fill(false);
  at[0] = true;
  for (const t of tokens) {
    const next = new Array<boolean>(n + 1).fill(false);
    let before = false; // some position up to the one looked at is reachable (for `**/`)
    for (let i = 0; i <= n; i++) {
      const prev = i > 0 ? file[i - 1]! : '';
      switch (t.kind) {
        case 'char':
          next[i] = i > 0 && at[i - 1]! && prev === t.c;
          break;
        case 'one':
          next[i] = i > 0 && at[i - 1]! && prev !== '/';
          break;
        case 'segment':
          next[i] = at[i]! || (i > 0 && next[i - 1]! && prev !== '/');
          break;
        case 'any':
          next[i] = at[i]! || (i > 0 && next[i - 1]! && !LINE_BREAK.has(prev));
          break;
        case 'folders': {
          // (?:.*/)?: here already, or a `/` after any run of characters from a reachable position.
          next[i] = at[i]! || (i > 0 && prev === '/' && before);
          // `before` carries a reachable start through the characters `.*` may span.
          before = i > 0 && LINE_BREAK.has(prev) ? at[i]! : before || at[i]!;
          break;
        }
        default: {
          const never: never = t;
          throw new Error(`unknown glob token ${JSON.stringify(never)}`);
        }
      }
    }
    at = next;
  }
  return at[n]!;
}

/**
 * `git diff <args>` between commits of the worktree `cwd`, read with the base branch's attributes, not the
 * worktree's. Git takes `.gitattributes` from the working tree it runs in, so an agent's own (`* -diff`, or one its
 * `.gitignore` keeps out of the commit) made every file of its change "Binary files … differ" for the reviewers,
 * and its lines none for maxDiffLines. So git runs in the worktree's git dir, which has no working tree, with the
 * base's root `.gitattributes` as the attributes file: what a project marks -diff (a lockfile) stays so.
 */
async function committedDiff(cwd: string, base: string, args: string[]): Promise<string> {
  const gitDir = gitdirPointer(cwd) ?? (await git(cwd, ['rev-parse', '--absolute-git-dir'])).stdout.trim();
  const attributes = await baseAttributes(cwd, gitDir, base);
  // DIFF_CONFIG, DIFF_WHOLE: with diff.ignoreSubmodules=all in the shared config a gitlink was in no list
  // (strayGitlinks passed it); with core.bigFileThreshold=1 every file was binary, and its lines none; a
  // diff.orderFile naming a FIFO hung git.
  if (attributes === null) return (await git(gitDir, [...DIFF_CONFIG, '-c', 'core.attributesFile=/dev/null', 'diff', ...DIFF_WHOLE, ...args])).stdout;
  const dir = mkdtempSync(join(tmpdir(), 'maestro-attributes-'));
  try {
    writeFileSync(join(dir, 'attributes'), attributes);
    return (await git(gitDir, [...DIFF_CONFIG, '-c', `core.attributesFile=${join(dir, 'attributes')}`, 'diff', ...DIFF_WHOLE, ...args])).stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The root `.gitattributes` of commits diffs were read against (null: none there), the last few: a commit's never changes. */
const attributesOf = new Map<string, string | null>();
const ATTRIBUTES_KEPT = 32;

/**
 * The base's root `.gitattributes` (null when it has none). A task's diff gate and its review read their diffs
 * against the same main, one `git cat-file` each (bench:daemon: 64 of 734 processes for 8 demo scenarios); the base
 * named by a ref the files can say (nameOnDisk) is read once per commit.
 */
async function baseAttributes(cwd: string, gitDir: string, base: string): Promise<string | null> {
  const commit = nameOnDisk(commonGitDir(gitDir), base);
  if (commit !== undefined && attributesOf.has(commit)) return attributesOf.get(commit)!;
  const read = await git(cwd, ['cat-file', 'blob', '--end-of-options', `${commit ?? base}:.gitattributes`], { okCodes: [128] });
  const text = read.code === 0 ? read.stdout : null;
  if (commit !== undefined) {
    if (attributesOf.size >= ATTRIBUTES_KEPT) attributesOf.delete(attributesOf.keys().next().value!);
    attributesOf.set(commit, text);
  }
  return text;
}

/** Changes from the merge-base of `base` and `head` to `head` (what merging head would bring). */
export async function diffStats(cwd: string, base: string, head: string, ownedFiles: string[], maxFileBytes?: number): Promise<DiffStats> {
  const stdout = await committedDiff(cwd, base, ['--raw', '--no-abbrev', '--numstat', '-z', '--no-renames', `${base}...${head}`]);
  const parts = stdout.split('\0');
  // -z --raw first: ":old_mode new_mode old_sha new_sha status\0path\0" per file; the gitlinks (mode 160000) are kept.
  const raw: RawEntry[] = [];
  let i = 0;
  for (; i + 1 < parts.length && parts[i]!.startsWith(':'); i += 2) {
    const [, newMode, oldSha, newSha, status] = parts[i]!.split(' ');
    raw.push({ path: parts[i + 1]!, newMode: newMode!, oldSha: oldSha!, newSha: newSha!, status: status! });
  }
  const gitlinks = raw.filter((r) => r.newMode === '160000').map((r) => r.path);
  const files: string[] = [];
  let linesAdded = 0;
  let linesDeleted = 0;
  const binary: RawEntry[] = [];
  // Then --numstat: "added\tdeleted\tpath\0", in the order of --raw; binary files show "-" for both counts.
  for (const entry of parts.slice(i)) {
    const m = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(entry);
    if (!m) continue;
    const at = files.push(m[3]!) - 1;
    if (m[1] !== '-') linesAdded += Number(m[1]);
    if (m[2] !== '-') linesDeleted += Number(m[2]);
    const entryOf = raw[at];
    if (m[1] === '-' && entryOf && entryOf.path === m[3] && entryOf.newMode !== '160000') binary.push(entryOf);
  }
  // A "binary" file that is text all the same counts its lines (binaryText.ts).
  const texts = await binaryTexts(cwd, binary.flatMap((r) => [r.oldSha, r.newSha]));
  // Not a file the project marks -diff: its lines stay out of the limit, as the project asks.
  for (const r of binary.filter((b) => ['nul_bytes', 'utf16'].includes(binaryTextOf(texts, b.oldSha, b.newSha) ?? ''))) {
    const counts = lineCounts(await blobTextDiff(texts, r.oldSha, r.newSha));
    linesAdded += counts.additions;
    linesDeleted += counts.deletions;
  }
  const owned = ownedMatcher(ownedFiles);
  const outsideOwned = ownedFiles.length ? files.filter((f) => !owned(f)) : [];
  const largeFiles = maxFileBytes === undefined ? [] : await largeFilesOf(cwd, raw, maxFileBytes);
  return { files, filesChanged: files.length, linesAdded, linesDeleted, outsideOwned, strayGitlinks: await strayGitlinksOf(cwd, head, gitlinks), largeFiles };
}

interface RawEntry {
  path: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  /** A (added), M (modified), T (type changed), D (deleted). */
  status: string;
}

/**
 * The files a change adds larger than `limit` bytes, or grows from at most `limit` to more: in one `cat-file`
 * for every blob involved. A file already past the limit on the base (a big lockfile) is not this change's doing.
 */
async function largeFilesOf(cwd: string, raw: RawEntry[], limit: number): Promise<Array<{ path: string; bytes: number }>> {
  const blobs = raw.filter((r) => r.status !== 'D' && r.newMode !== '160000');
  if (!blobs.length) return [];
  const size = await blobSizes(cwd, blobs.flatMap((r) => [r.newSha, r.oldSha]));
  return blobs.flatMap((r) => {
    const bytes = size.get(r.newSha) ?? 0;
    const before = size.get(r.oldSha) ?? 0;
    return bytes > limit && before <= limit ? [{ path: r.path, bytes }] : [];
  });
}

/**
 * The gitlinks among `gitlinks` that `.gitmodules` at `head` does not declare. A git repository an agent made or
 * cloned inside its worktree (`git init`, `git clone`, a scaffolder that runs `git init` and commits) is committed
 * by `git add -A` as a gitlink: one line, "Subproject commit <sha>", instead of its files. With no .gitmodules
 * entry nobody can fetch that commit: it exists only in that folder, which goes with the worktree after the merge.
 */
async function strayGitlinksOf(cwd: string, head: string, gitlinks: string[]): Promise<string[]> {
  if (!gitlinks.length) return [];
  // -z: "submodule.<name>.path\n<path>\0"; exit 1 when none matches, 128 when there is no .gitmodules.
  const { stdout } = await git(cwd, ['config', '-z', '--blob', `${head}:.gitmodules`, '--get-regexp', '^submodule\\..*\\.path$'], { okCodes: [1, 128] });
  const declared = new Set(stdout.split('\0').map((entry) => entry.slice(entry.indexOf('\n') + 1)));
  return gitlinks.filter((path) => !declared.has(path));
}

/**
 * The patch the reviewers read. Git's own, whatever the repository's settings: a person's `diff.external`
 * (difftastic) or a textconv driver (`.gitattributes` with `diff.<driver>.textconv`, which an agent can write into
 * the shared config) replaced it with that program's output, text that is not what the merge lands.
 */
export async function diffText(cwd: string, base: string, head: string, maxChars = 60_000): Promise<string> {
  const stdout = await withBinaryText(cwd, await committedDiff(cwd, base, ['--no-color', '--no-ext-diff', '--no-textconv', '--full-index', '--src-prefix=a/', '--dst-prefix=b/', `${base}...${head}`]));
  if (stdout.length <= maxChars) return stdout;
  // Past the cut, the reviewers would never see a change at all (padding could push one there): they are told
  // which files they did not see whole, to read before their verdict. Named as the patch parser names them: a
  // regex on `diff --git a/… b/…` took "y" for "x b/y", and passed over every quoted name ("ü.md", a tab).
  const cutIn = stdout.lastIndexOf('\ndiff --git ', maxChars);
  const unseen = patchFileNames(stdout.slice(cutIn < 0 ? 0 : cutIn + 1));
  return `${stdout.slice(0, maxChars)}\n[diff cut at ${maxChars} of ${stdout.length} characters. Not shown above, in part or at all, the changes to: ${unseen.join(', ')}. Read those files in the working directory before your verdict: it must cover the whole change.]`;
}

/** A file's "Binary files … differ" in `patch` replaced by its lines when it is text all the same (binaryText.ts). */
async function withBinaryText(cwd: string, patch: string): Promise<string> {
  if (!patch.includes('\nBinary files ')) return patch;
  const lines = patch.split('\n');
  // Each binary line with the blob ids of its block's `index <old>..<new>` line (--full-index).
  const binary: Array<{ at: number; from: string; to: string }> = [];
  let ids: [string, string] | null = null;
  for (const [at, line] of lines.entries()) {
    if (line.startsWith('diff --git ')) ids = null;
    const index = /^index ([0-9a-f]+)\.\.([0-9a-f]+)/.exec(line);
    if (index) ids = [index[1]!, index[2]!];
    if (line.startsWith('Binary files ') && ids) binary.push({ at, from: ids[0], to: ids[1] });
  }
  const texts = await binaryTexts(cwd, binary.flatMap((b) => [b.from, b.to]));
  for (const b of binary.reverse()) {
    const why = binaryTextOf(texts, b.from, b.to);
    if (why === 'nul_bytes' || why === 'utf16') {
      const note = `[Git calls this file binary (${why === 'utf16' ? 'UTF-16' : 'NUL bytes'}); its change is shown as text, each NUL as \\u{0}.]`;
      lines.splice(b.at, 1, note, ...(await blobTextDiff(texts, b.from, b.to)).map(showNuls));
    } else if (why === 'marked_diff') {
      // The project marks it -diff (a lockfile): its lines stay out, as the project asks, but not its size.
      const { additions, deletions } = lineCounts(await blobTextDiff(texts, b.from, b.to));
      lines[b.at] = `[The project's .gitattributes marks this text file -diff: its change (+${additions} −${deletions} lines) is not shown here. Read it in the working directory if your verdict depends on it (a dependency's source or checksum).]`;
    }
  }
  return lines.join('\n');
}
