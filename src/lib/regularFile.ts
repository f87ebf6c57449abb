/**
 * Opening a file someone else writes (a project's config, a run's files, a transcript) without hanging on it. A
 * plain open of a FIFO blocks until a writer comes, forever if none does, and in the daemon every request and tick
 * with it. So the file is opened non-blocking, and read only if it is a regular file: a FIFO, a device (a link to
 * /dev/zero would fill memory) or a folder is refused, saying what it is. One open, so nothing can swap the file
 * for a FIFO between a check and the read.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';

/** What a path holds, in words, for an error. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'something else';
}

export class NotRegularFile extends Error {
  readonly code = 'ENOTREG';
  constructor(path: string, st: Stats) {
    super(`${path} is ${kindOf(st)}, not a regular file: nothing was read from it`);
  }
}

/** A descriptor for reading `path`, a regular file (NotRegularFile otherwise, and fs's errors: ENOENT and the like). */
export function openRegular(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFile(path, st);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * The text of `path`, a regular file (see openRegular), without a leading byte-order mark: editors on Windows write
 * one, and JSON.parse took it for an unexpected (invisible) token.
 */
export function readRegularFile(path: string): string {
  const fd = openRegular(path);
  try {
    const text = readFileSync(fd, 'utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } finally {
    closeSync(fd);
  }
}
