/**
 * Text that git calls binary. Git takes a file with a NUL byte in its first 8,000 bytes for binary: its diff is
 * "Binary files a/x and b/x differ" and its lines count as none. One NUL in a comment of an agent's source file,
 * or the file saved as UTF-16 (which tsc compiles), hid that file's whole change from the reviewers, from
 * maxDiffLines and from the board. A blob that is UTF-8 apart from its NULs, or UTF-16 with its byte order mark,
 * reads as text to a person, so its change is diffed as text (the reviewers read each NUL as `\u{0}`, the board
 * shows it as it shows every control character); an image or an archive stays binary.
 */
import { isUtf8 } from 'node:buffer';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobSizes, readBlobs } from './blobs.js';
import { git } from './git.js';

/** Why git calls a text file binary: NUL bytes in it, UTF-16, or the project's `-diff` (see allText). */
export type GitBinaryText = 'nul_bytes' | 'utf16' | 'marked_diff';

export interface BlobText {
  text: string;
  /** Why git calls it binary; null for UTF-8 text git reads as such (the other side of a change). */
  why: Exclude<GitBinaryText, 'marked_diff'> | null;
}

/** Git's binary test: a NUL in the first this many bytes. */
const GIT_BINARY_PROBE = 8000;
/** Blobs larger than this stay binary (the board collapses such files anyway; the reviewers' diff is cut). */
const MAX_BLOB_BYTES = 8 * 1024 * 1024;
/** How many bytes of one change's binary blobs are read to tell, the smallest first. */
const BUDGET_BYTES = 32 * 1024 * 1024;
/** How many blobs of one change are read to tell. */
const MAX_BLOBS = 1000;

const ZERO_SHA = /^0+$/;

/** How a NUL shows in the reviewers' diff: as the CLI shows control characters. */
export const showNuls = (line: string): string => line.replaceAll('\0', '\\u{0}');

/** The text a person reads in `bytes` (UTF-8, with or without NULs, or UTF-16 with its mark); else null. */
export function readableText(bytes: Buffer): BlobText | null {
  const bom = bytes.subarray(0, 2).toString('hex');
  if ((bom === 'fffe' || bom === 'feff') && bytes.length % 2 === 0) {
    try {
      return { text: new TextDecoder(bom === 'fffe' ? 'utf-16le' : 'utf-16be', { fatal: true }).decode(bytes), why: 'utf16' };
    } catch {
      return null; // Not UTF-16 after all (an unpaired surrogate).
    }
  }
  if (!isUtf8(bytes)) return null;
  return { text: bytes.toString('utf8'), why: bytes.subarray(0, GIT_BINARY_PROBE).includes(0) ? 'nul_bytes' : null };
}

/**
 * The blobs among `shas` a person reads as text, with that text: the sides of the changes git called binary. A
 * change is shown as text when one of its sides is text git calls binary (`why`); a side that is not text (an image
 * replaced by source) is shown as absent, so that the text is seen whole.
 */
export async function binaryTexts(cwd: string, shas: string[]): Promise<Map<string, BlobText>> {
  const sizes = await blobSizes(cwd, shas);
  let budget = BUDGET_BYTES;
  const read = [...sizes].filter(([, size]) => size <= MAX_BLOB_BYTES).sort((a, b) => a[1] - b[1]).filter(([, size]) => (budget -= size) >= 0).slice(0, MAX_BLOBS);
  const found = new Map<string, BlobText>();
  for (const [sha, bytes] of await readBlobs(cwd, read.map(([sha]) => sha))) {
    const text = readableText(bytes);
    if (text) found.set(sha, text);
  }
  return found;
}

/**
 * The lines of the diff from text `from` to text `to` (null: the side is absent, or not text), from the first
 * hunk on: git's own diff of the two, run on files of their own outside any repository.
 */
export async function textDiff(from: string | null, to: string | null): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-text-diff-'));
  try {
    const side = (name: string, text: string | null) => (text === null ? '/dev/null' : (writeFileSync(join(dir, name), text), name));
    const args = ['-c', 'diff.suppressBlankEmpty=false', '-c', 'core.bigFileThreshold=512m', 'diff', '--no-index', '--text', '--no-color', '--no-ext-diff', '--no-textconv', '--unified=3'];
    const { stdout } = await git(dir, [...args, '--', side('a', from), side('b', to)], { okCodes: [1] });
    const lines = stdout.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const first = lines.findIndex((l) => l.startsWith('@@'));
    return first < 0 ? [] : lines.slice(first);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Why the change from blob `from` to blob `to`, which git calls binary, is text all the same (see binaryTexts), or
 * null when it is not: a side that is text git calls binary, else every side that exists text, which is a file the
 * project marks `-diff` (a lockfile).
 */
export function binaryTextOf(texts: Map<string, BlobText>, from: string, to: string): GitBinaryText | null {
  const why = texts.get(to)?.why ?? texts.get(from)?.why;
  if (why) return why;
  return [from, to].filter((sha) => !ZERO_SHA.test(sha)).every((sha) => texts.has(sha)) ? 'marked_diff' : null;
}

/** The lines of the change from blob `from` to blob `to` as text, given `texts` from binaryTexts. */
export function blobTextDiff(texts: Map<string, BlobText>, from: string, to: string): Promise<string[]> {
  return textDiff(texts.get(from)?.text ?? null, texts.get(to)?.text ?? null);
}

/** Added and deleted lines of textDiff's lines. */
export function lineCounts(lines: string[]): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const l of lines) l[0] === '+' ? additions++ : l[0] === '-' ? deletions++ : 0;
  return { additions, deletions };
}
