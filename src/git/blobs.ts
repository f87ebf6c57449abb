/**
 * Blobs read from the object store in one `git cat-file` each way, whatever their number: their sizes
 * (`--batch-check`), and their bytes (`--batch`, read as latin1 so that every byte is kept).
 */
import { git } from './git.js';

const ZERO_SHA = /^0+$/;
const wantedOf = (shas: Iterable<string>) => [...new Set([...shas].filter((s) => s && !ZERO_SHA.test(s)))];

/** The size in bytes of each object among `shas` that is there; an absent side (all zeros) or a missing object is left out. */
export async function blobSizes(cwd: string, shas: Iterable<string>): Promise<Map<string, number>> {
  const wanted = wantedOf(shas);
  const sizes = new Map<string, number>();
  if (!wanted.length) return sizes;
  const { stdout } = await git(cwd, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], { input: `${wanted.join('\n')}\n` });
  for (const line of stdout.split('\n')) {
    const [sha, size] = line.split(' ');
    if (sha && size && /^\d+$/.test(size)) sizes.set(sha, Number(size));
  }
  return sizes;
}

/** The bytes of each blob among `shas`, in one `cat-file --batch`; what is missing or no blob is left out. */
export async function readBlobs(cwd: string, shas: Iterable<string>): Promise<Map<string, Buffer>> {
  const wanted = wantedOf(shas);
  const blobs = new Map<string, Buffer>();
  if (!wanted.length) return blobs;
  // Per object "<sha> <type> <size>\n<size bytes>\n", or "<sha> missing\n"; latin1: one char per byte.
  const out = (await git(cwd, ['cat-file', '--batch'], { input: `${wanted.join('\n')}\n`, encoding: 'latin1' })).stdout;
  for (let at = 0; at < out.length; ) {
    const eol = out.indexOf('\n', at);
    if (eol < 0) break;
    const [sha, type, size] = out.slice(at, eol).split(' ');
    at = eol + 1;
    if (size === undefined) continue; // missing
    const end = at + Number(size);
    if (type === 'blob') blobs.set(sha!, Buffer.from(out.slice(at, end), 'latin1'));
    at = end + 1;
  }
  return blobs;
}
