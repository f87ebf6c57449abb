/**
 * The SQLite write-ahead log (`<db>-wal`), looked at before the daemon opens the database.
 *
 * SQLite reads a log's frames up to the first one that does not check out and forgets the rest
 * without a word; the first write then starts the log over, and the last connection to close
 * deletes it. A damaged log would so lose what it holds, and the evidence with it, at the first
 * start (seen: a log whose header was overwritten read as an empty database, and was gone after
 * the refusal that followed). So, before opening:
 * - a log whose header is not a WAL header (magic, format version, page size or checksum wrong,
 *   or shorter than the header) is refused, untouched: SQLite would skip every transaction in it;
 * - a log that ends part-way through a frame is copied aside as found, with a warning, and the
 *   start goes on with every whole transaction SQLite can read. A kill -9 can leave this too
 *   (SQLite writes a frame's header and its page in two writes): then only the transaction being
 *   written, never committed, is missing; a log cut short by a copy or a disk loses later ones.
 *   The log itself is then cut to its last whole frame (bytes SQLite never reads): SQLite starts a
 *   log over from its head without shortening the file, so a torn end would stay, and be warned of
 *   and copied again at every later start.
 *
 * Header layout (sqlite.org/fileformat.html, "WAL File Format"): 32 bytes, big-endian words:
 * magic 0x377f0682|0x377f0683, version 3007000, page size, checkpoint sequence, two salts, two
 * checksum words over the first 24 bytes. Each frame is a 24-byte header and one page.
 */
import { closeSync, constants, copyFileSync, openSync, readSync, rmSync, statSync, truncateSync } from 'node:fs';
import { MaestroError } from '../core/errors.js';

const HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const WAL_VERSION = 3007000;

export type WalState =
  | { state: 'none' }
  | { state: 'ok' }
  | { state: 'damaged'; detail: string }
  /** Ends `extra` bytes into a frame, after `whole` whole frames. */
  | { state: 'torn'; size: number; whole: number; extra: number; frameBytes: number };

/** What the log beside `dbPath` looks like, without changing it. */
export function inspectWal(dbPath: string): WalState {
  const wal = `${dbPath}-wal`;
  let size: number;
  try {
    size = statSync(wal).size;
  } catch {
    return { state: 'none' };
  }
  if (size === 0) return { state: 'none' };
  if (size < HEADER_BYTES) return { state: 'damaged', detail: `it is ${size} bytes, shorter than the ${HEADER_BYTES}-byte header` };
  const head = readHeader(wal);
  const magic = head.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return { state: 'damaged', detail: `it does not start with the WAL magic number (found 0x${magic.toString(16).padStart(8, '0')})` };
  const version = head.readUInt32BE(4);
  if (version !== WAL_VERSION) return { state: 'damaged', detail: `its header names format version ${version}, not ${WAL_VERSION}` };
  const field = head.readUInt32BE(8);
  const pageBytes = field === 1 ? 65536 : field;
  if (pageBytes < 512 || pageBytes > 65536 || (pageBytes & (pageBytes - 1)) !== 0) return { state: 'damaged', detail: `its header names page size ${field}` };
  const [s0, s1] = checksum(head.subarray(0, 24), (magic & 1) === 1);
  if (s0 !== head.readUInt32BE(24) || s1 !== head.readUInt32BE(28)) return { state: 'damaged', detail: 'its header checksum does not match' };
  const frameBytes = FRAME_HEADER_BYTES + pageBytes;
  const extra = (size - HEADER_BYTES) % frameBytes;
  if (extra === 0) return { state: 'ok' };
  return { state: 'torn', size, whole: Math.floor((size - HEADER_BYTES) / frameBytes), extra, frameBytes };
}

function readHeader(path: string): Buffer {
  const head = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  return head;
}

/** SQLite's WAL checksum: pairs of 32-bit words, big- or little-endian as the magic's low bit says. */
function checksum(bytes: Buffer, bigEndian: boolean): [number, number] {
  let s0 = 0;
  let s1 = 0;
  for (let i = 0; i < bytes.length; i += 8) {
    const a = bigEndian ? bytes.readUInt32BE(i) : bytes.readUInt32LE(i);
    const b = bigEndian ? bytes.readUInt32BE(i + 4) : bytes.readUInt32LE(i + 4);
    s0 = (s0 + a + s1) >>> 0;
    s1 = (s1 + b + s0) >>> 0;
  }
  return [s0, s1];
}

/**
 * A damaged log (inspectWal), said as the daemon's start refuses it and as `maestro doctor` reports it: what is wrong,
 * what SQLite would do with it, `so` (what was done instead), and the way on.
 */
export function damagedWalMessage(dbPath: string, detail: string, so: string): string {
  const wal = `${dbPath}-wal`;
  return (
    `The write-ahead log ${wal} of the SQLite database ${dbPath} is damaged: ${detail}. SQLite would skip every transaction in it (the latest changes to tasks and runs) and then delete it, so ${so}; nothing was changed. ` +
    `Keep a copy of both files. To start from what ${dbPath} holds without the log, move the log aside (mv ${wal} ${wal}.damaged) and start again.`
  );
}

/**
 * Before the daemon opens `dbPath`: refuses a damaged log untouched (DATABASE_CORRUPT, naming it and the way
 * on); keeps a copy of a torn one and returns the warning to give. `now` names the copy. `cut`: the torn end is
 * cut off too, only where no other process can be writing the log (a database in the daemon's own home, which the
 * home lock keeps to one daemon): a frame being written by another daemon on a shared file would be cut under it.
 */
export function checkWalBeforeOpen(dbPath: string, now: Date, options: { cut: boolean }): string | null {
  const wal = `${dbPath}-wal`;
  const found = inspectWal(dbPath);
  if (found.state === 'none' || found.state === 'ok') return null;
  if (found.state === 'damaged') {
    throw new MaestroError('DATABASE_CORRUPT', damagedWalMessage(dbPath, found.detail, 'Maestro did not open the database'), { details: { path: wal } });
  }
  const copy = `${wal}.torn-${now.toISOString().replace(/[:.]/g, '-')}`;
  try {
    copyFileSync(wal, copy, constants.COPYFILE_EXCL);
    if (options.cut) truncateSync(wal, found.size - found.extra);
  } catch (err) {
    rmSync(copy, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    throw new MaestroError(
      code === 'ENOSPC' || code === 'EDQUOT' ? 'DISK_FULL' : 'HOME_READ_ONLY',
      `The write-ahead log ${wal} ends part-way through a frame, and Maestro could not keep a copy of it as found before opening the database (${code ?? (err as Error).message}): nothing was opened or changed. Free some space or make ${copy} writable, and start again.`,
      { cause: err, details: { path: copy } },
    );
  }
  return (
    `The write-ahead log ${wal} ends ${found.extra} bytes into a frame (${found.size} bytes: ${found.whole} whole frames of ${found.frameBytes}). ` +
    `The database opens with every whole transaction before that point; the one being written there is not in it (after a crash that one was never committed; if the file was cut short, later ones are lost too). A copy of the log as found is at ${copy}.`
  );
}
