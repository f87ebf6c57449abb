/**
 * Opening a file someone else writes (a project's config, a run's files, a transcript) without hanging on it. A
 * plain open of a FIFO blocks until a writer comes, forever if none does, and in the daemon every request and tick
 * with it. So the file is opened non-blocking, and read only if it is a regular file: a FIFO, a device (a link to
 * /dev/zero would fill memory) or a folder is refused, saying what it is. One open, so nothing can swap the file
 * for a FIFO between a check and the read.
 *
 * Writing a file afresh in a folder we own (a check's log) is held to the same rule, and refuses a symbolic link in
 * the file's place rather than following it: a plain 'w' open would empty and overwrite whatever the link points to.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { isLink } from './paths.js';

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
  constructor(path: string, st: Stats, done = 'nothing was read from it') {
    super(`${path} is ${kindOf(st)}, not a regular file: ${done}`);
  }
}

/** A symbolic link where a file of our own was to be written: refused, not followed. */
export class LinkRefused extends Error {
  readonly code = 'ELOOP';
  constructor(path: string) {
    let target = 'somewhere';
    try {
      target = readlinkSync(path);
    } catch {
      // gone again: the refusal still stands
    }
    super(`${path} is a symbolic link (to ${target}): it was not followed, and nothing was written through it`);
  }
}

/**
 * A descriptor for writing `path` afresh (read back through the same descriptor): created, or emptied once it is
 * known to be a regular file. A symbolic link as `path` is refused (LinkRefused: O_NOFOLLOW, so no link can be
 * slipped in between a check and the open), and so is a FIFO or a device (NotRegularFile: opened non-blocking, so a
 * FIFO without a reader does not hang the open); fs's errors otherwise (ENOENT for a missing folder, EISDIR, ...).
 */
export function openRegularForWrite(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' && isLink(path)) throw new LinkRefused(path);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFile(path, st, 'nothing was written to it');
    ftruncateSync(fd, 0);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}


/**
 * A descriptor for reading `path`, a regular file (NotRegularFile otherwise, and fs's errors: ENOENT and the like).
 * `noFollow`: a symbolic link as `path` is not followed (ELOOP), for a file someone may swap for a link to a secret.
 */
export function openRegular(path: string, opts: { noFollow?: boolean } = {}): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (opts.noFollow ? constants.O_NOFOLLOW : 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFile(path, st);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The bytes of `path`, a regular file (see openRegular): for a reader that must know whether they are UTF-8 at all. */
export function readRegularBytes(path: string): Buffer {
  const fd = openRegular(path);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of `path`, a regular file (see openRegular), without a leading byte-order mark: editors on Windows write
 * one, and JSON.parse took it for an unexpected (invisible) token. Bytes that are not UTF-8 read as U+FFFD.
 */
export function readRegularFile(path: string): string {
  return textOf(readRegularBytes(path));
}

/** `bytes` decoded as UTF-8, without a leading byte-order mark (readRegularFile). */
export function textOf(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
