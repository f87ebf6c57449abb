/**
 * Files in a worktree too large to commit, found before `git add -A` reads them. The diff gate refuses a file added
 * or grown past `limits.maxFileBytes` once it is committed, but the commit itself hashed and compressed every byte:
 * an agent's `truncate -s 1T big.bin` costs it nothing (a sparse file), and cost the worker hours of git's time at
 * full CPU (4 GB took 34 s on a busy 2-core machine) and about a gigabyte of loose object in the repository's own
 * `.git/objects`, which every worktree shares. Measured by `lstat` instead, which reads no content; a file that
 * was already that large at HEAD is the diff gate's to judge, as it was.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { git } from './git.js';
import { shownName } from './gitNames.js';

/** The files of `worktree` that `git add -A` would read (untracked, or changed since the index) larger than `limit` bytes, and not so at HEAD. */
export async function largeUncommitted(worktree: string, limit: number): Promise<Array<{ path: string; bytes: number }>> {
  // As bytes (latin1), as setAsideLeftovers reads them: a name that is not UTF-8 stays itself.
  const { stdout } = await git(worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], { encoding: 'latin1' });
  const large: Array<{ key: string; bytes: number }> = [];
  // Only what the worktree holds beyond the index ("XY name", Y not blank): what git staged itself, a conflict run's
  // merge of the base, is read already.
  const changed = stdout.split('\0').filter((entry) => entry.length > 3 && entry[1] !== ' ').map((entry) => entry.slice(3));
  for (const key of changed) {
    try {
      // The path as bytes: a name that is not UTF-8 is found as it is on disk.
      const st = lstatSync(Buffer.concat([Buffer.from(join(worktree, '/')), Buffer.from(key, 'latin1')]));
      if (st.isFile() && st.size > limit) large.push({ key, bytes: st.size });
    } catch {
      // deleted: nothing to read
    }
  }
  if (!large.length) return [];
  const atHead = await headSizes(worktree);
  return large.filter((f) => (atHead.get(f.key) ?? 0) <= limit).map((f) => ({ path: shownName(f.key), bytes: f.bytes }));
}

/** Each file's size at HEAD, by its name's bytes; empty before the first commit. Read only when a large file is found. */
async function headSizes(worktree: string): Promise<Map<string, number>> {
  const { stdout, code } = await git(worktree, ['ls-tree', '-r', '-l', '-z', '--full-tree', 'HEAD'], { encoding: 'latin1', okCodes: [128] });
  const sizes = new Map<string, number>();
  if (code !== 0) return sizes;
  // "<mode> <type> <sha> <size>\t<name>"
  for (const entry of stdout.split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab > 0) sizes.set(entry.slice(tab + 1), Number(entry.slice(0, tab).trim().split(/\s+/)[3]) || 0);
  }
  return sizes;
}
