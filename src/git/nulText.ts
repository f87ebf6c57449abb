/**
 * Text that git calls binary. Git takes a file with a NUL byte in its first 8,000 bytes for binary: its diff is
 * "Binary files a/x and b/x differ" and its lines count as none. One NUL in a comment of an agent's source file
 * hid that file's whole change from the reviewers, from maxDiffLines and from the board. A blob that is UTF-8
 * apart from its NULs reads as text to a person, so it is diffed as text, blob against blob (the reviewers read each
 * NUL as `\u{0}`, the board shows it as it shows every control character); an image or an archive (not UTF-8)
 * stays binary.
 */
import { createHash } from 'node:crypto';
import { git } from './git.js';

/** Git's binary test: a NUL in the first this many bytes. */
const GIT_BINARY_PROBE = 8000;
/** Blobs larger than this stay binary (the board collapses such files anyway; the reviewers' diff is cut). */
export const NUL_TEXT_MAX_BYTES = 8 * 1024 * 1024;
/** How many bytes of one change's binary blobs are read to tell. */
const NUL_TEXT_BUDGET_BYTES = 32 * 1024 * 1024;
/** How many blobs of one change are read to tell: each takes one git process. */
const NUL_TEXT_MAX_BLOBS = 1000;

const ZERO_SHA = /^0+$/;

/** How a NUL shows in the reviewers' diff: as the CLI shows control characters. */
export const showNuls = (line: string): string => line.replaceAll('\0', '\\u{0}');

/**
 * The blobs among `shas` that are UTF-8 text holding a NUL where git looks for one. Git's output is read as UTF-8,
 * which turns bytes that are not into U+FFFD: the text read back is the blob only when it hashes to the blob's id.
 */
export async function nulTextBlobs(cwd: string, shas: string[]): Promise<Set<string>> {
  const wanted = [...new Set(shas.filter((s) => /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(s) && !ZERO_SHA.test(s)))];
  const found = new Set<string>();
  if (!wanted.length) return found;
  const { stdout } = await git(cwd, ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], { input: `${wanted.join('\n')}\n` });
  const blobs = stdout.split('\n').map((l) => l.split(' ')).filter(([sha, type, size]) => sha && type === 'blob' && Number(size) <= NUL_TEXT_MAX_BYTES);
  // The smallest first, up to the budgets: a change of many large images reads little.
  let budget = NUL_TEXT_BUDGET_BYTES;
  const small = blobs.sort((a, b) => Number(a[2]) - Number(b[2])).filter(([, , size]) => (budget -= Number(size)) >= 0).slice(0, NUL_TEXT_MAX_BLOBS).map(([sha]) => sha!);
  for (const sha of small) {
    const text = (await git(cwd, ['cat-file', 'blob', sha])).stdout;
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.subarray(0, GIT_BINARY_PROBE).includes(0) && blobId(bytes, sha.length) === sha) found.add(sha);
  }
  return found;
}

function blobId(bytes: Buffer, hexLength: number): string {
  const hash = createHash(hexLength === 64 ? 'sha256' : 'sha1');
  return hash.update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * The lines of `git diff --text` from blob `from` to blob `to` (null or all zeros: the side is absent), from the
 * first hunk on. Git 2.39 diffs no blob against an empty blob it has not stored, so an added or a
 * deleted file is one hunk written here from its text.
 */
export async function blobTextDiff(cwd: string, from: string | null, to: string | null): Promise<string[]> {
  const absent = (sha: string | null) => sha === null || ZERO_SHA.test(sha);
  if (absent(from) || absent(to)) {
    const added = !absent(to);
    const text = (await git(cwd, ['cat-file', 'blob', (added ? to : from)!])).stdout;
    if (text === '') return [];
    const lines = text.split('\n');
    const whole = lines.at(-1) === '';
    if (whole) lines.pop();
    const header = added ? `@@ -0,0 +1,${lines.length} @@` : `@@ -1,${lines.length} +0,0 @@`;
    return [header, ...lines.map((l) => `${added ? '+' : '-'}${l}`), ...(whole ? [] : ['\\ No newline at end of file'])];
  }
  const { stdout } = await git(cwd, ['-c', 'diff.suppressBlankEmpty=false', '-c', 'core.bigFileThreshold=512m', 'diff', '--text', '--no-color', '--no-ext-diff', '--no-textconv', '--unified=3', from!, to!]);
  const lines = stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const first = lines.findIndex((l) => l.startsWith('@@'));
  return first < 0 ? [] : lines.slice(first);
}

/** Added and deleted lines of blobTextDiff's lines. */
export function lineCounts(lines: string[]): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const l of lines) l[0] === '+' ? additions++ : l[0] === '-' ? deletions++ : 0;
  return { additions, deletions };
}
