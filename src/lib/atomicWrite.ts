/**
 * The one atomic file write: write a temporary file in the target's folder,
 * fsync it, rename it over the target, fsync the folder. A reader sees the old
 * file or the new one, never half of one; after a crash or a power loss the
 * file is the old one or the new one (the folder fsync makes the rename
 * itself durable). Used by the executor's file protocol, knowledge, the
 * observer's wiki and bundles, and the home's token. `writeFileAtomicOffLoop`
 * takes the same steps with its fsyncs in libuv's threadpool, for the daemon;
 * any other write or settling read of its file in this process finishes it first.
 *
 * The temporary name is unique (`.<name>.<pid>.<random>.tmp`, hidden so folder
 * walkers skip it) unless the caller holds a lock on the target and asks for
 * the fixed `<target>.tmp` (knowledge, under its corpus lock): then a crash
 * leaves at most one temporary file, which the next write replaces.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { MaestroError } from '../core/errors.js';
import { sleepSync } from './sleepSync.js';

export interface AtomicWriteOptions {
  /** Mode of the new file (default 0o666 less the umask); the temporary file has it from its first byte. */
  mode?: number;
  /** false skips both fsyncs, for derived files that can be rebuilt (still never torn for a reader). Default true. */
  durable?: boolean;
  /** Create the target's folder first. */
  mkdir?: boolean;
  /** 'fixed' (`<target>.tmp`) only for a writer holding a lock on the target (an off-loop write in flight is finished before another write of its target). Default 'unique'. */
  tmp?: 'unique' | 'fixed';
  /**
   * After the temporary file is written (and synced), before the rename: a test seam, and a caller's
   * last word (wiki redact gives the file its old mode exactly, and throws to drop the write when the
   * target changed since it was read).
   */
  beforeRename?: (tmpPath: string) => void;
  /**
   * The text the new file was made from (null: there was no file). A person's editor or another tool takes no
   * lock of ours: a target that no longer holds this text just before the rename (looked at by content) was
   * saved by them meanwhile, and is left as they saved it: KNOWLEDGE_CONFLICT, nothing written.
   */
  readAs?: string | null;
  /** Test seam: told each durable step as it happens ('fsync-file', 'rename', 'fsync-dir'). */
  step?: (name: 'fsync-file' | 'rename' | 'fsync-dir') => void;
}

/** EPERM on rename (a reader holding the file on some platforms) is retried twice: 20 ms, 40 ms (FORMATS §6). */
const RENAME_RETRIES_MS = [20, 40];

export function writeFileAtomic(target: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): void {
  stageFileAtomic(target, data, opts).commit();
}

/** A file written beside its target and not yet in place: `commit` renames it over the target, `discard` drops it. */
export interface StagedFile {
  commit(): void;
  discard(): void;
}

/**
 * The first half of writeFileAtomic: the temporary file written (and synced). A caller that must record
 * something elsewhere first (a database row) commits the file once that is done, or discards it: a full
 * disk fails the write here, before anything has changed, and the rename that follows needs no space.
 */
export function stageFileAtomic(target: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): StagedFile {
  settleWrite(target);
  const temp = writeTemp(target, data, opts);
  syncedOrDropped(temp, target, () => {
    if (temp.durable) {
      fsyncSync(temp.fd);
      opts.step?.('fsync-file');
    }
  });
  const commit = () => {
    renameOver(temp, target, opts);
    if (temp.durable) {
      fsyncDir(temp.dir);
      opts.step?.('fsync-dir');
    }
  };
  return { commit, discard: temp.discard };
}

/**
 * writeFileAtomic, the same steps in the same order, with its two fsyncs awaited in libuv's threadpool: the
 * event loop serves requests and workers while the disk syncs (~1.3 ms each on the bench machine, 2026-12;
 * 16 a run were a fifth of the daemon's time with 4 workers). From its temporary file to its folder's fsync the
 * write is in flight: a writer of the same target in this process (any write here), or a reader that asks
 * (`settleWrite`), finishes it first, synchronously, so nothing in this process reads the old file after it
 * began or writes over it from what it read before, and the fixed temporary name is never two writers'.
 */
export async function writeFileAtomicOffLoop(target: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  settleWrite(target);
  const temp = writeTemp(target, data, opts);
  // Where the write is (an object: a settling caller moves it on while this function awaits), and its error.
  const w: { at: 'written' | 'synced' | 'renamed' | 'done'; failed: { err: unknown } | null } = { at: 'written', failed: null };
  // Each step runs once, whoever runs it: this write's own continuation or a settling caller.
  const run = (step: () => void) => {
    if (w.failed) throw w.failed.err;
    try {
      step();
    } catch (err) {
      w.failed = { err };
      if (w.at === 'written' || w.at === 'synced') temp.discard();
      throw err;
    }
  };
  const synced = () => {
    w.at = 'synced';
    if (temp.durable) opts.step?.('fsync-file');
  };
  const renamed = () => {
    renameOver(temp, target, opts);
    w.at = temp.durable ? 'renamed' : 'done';
  };
  const dirSynced = () => {
    w.at = 'done';
    opts.step?.('fsync-dir');
  };
  // A settling caller goes on with the file as it is; a step that fails here is this write's error, not theirs.
  const settle = () => {
    try {
      if (w.at === 'written') run(() => (temp.durable && fsyncSync(temp.fd), synced()));
      if (w.at === 'synced') run(renamed);
      if (w.at === 'renamed') run(() => (fsyncDir(temp.dir), dirSynced()));
    } catch {
      // kept in w.failed: the write's own promise rejects with it
    }
  };
  inFlight.set(target, settle);
  try {
    try {
      if (temp.durable) await fsyncOffLoop(temp.fd);
    } catch (err) {
      if (w.at === 'written') run(() => {
        throw namedError(err, target);
      });
    } finally {
      closeSync(temp.fd); // only now: a threadpool fsync may still have had it
    }
    if (w.at === 'written') run(synced);
    if (w.at === 'synced') run(renamed);
    if (w.at === 'renamed') {
      await fsyncDirOffLoop(temp.dir);
      if (w.at === 'renamed') run(dirSynced);
    }
    if (w.failed) throw w.failed.err;
  } finally {
    if (inFlight.get(target) === settle) inFlight.delete(target);
  }
}

/** writeFileAtomicOffLoop's writes between their temporary file and their folder's fsync, by target. */
const inFlight = new Map<string, () => void>();

/**
 * Finishes an off-loop write of `target` in flight in this process, synchronously (its fsyncs then block, as
 * writeFileAtomic's do): called by every write here, and by a reader that must not see the file's old text
 * once a write of it has begun (knowledge's session, run and receipt readers). A write that fails here is
 * dropped (the old file stays) and its own promise rejects; the caller goes on.
 */
export function settleWrite(target: string): void {
  inFlight.get(target)?.();
}

interface TempFile {
  tmp: string;
  dir: string;
  /** Open for its fsync: syncedOrDropped closes it. */
  fd: number;
  durable: boolean;
  discard: () => void;
}

/** The temporary file beside `target`, created exclusively and written whole, still open; a failed write leaves none. */
function writeTemp(target: string, data: string | Uint8Array, opts: AtomicWriteOptions): TempFile {
  const dir = dirname(target);
  if (opts.mkdir) mkdirSync(dir, { recursive: true });
  const tmp = opts.tmp === 'fixed' ? `${target}.tmp` : join(dir, `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  // Created exclusively: never somebody else's file, never through a planted link. The fixed name
  // belongs to the lock holder, so a leftover there (a crashed write's, or a link) is removed first.
  if (opts.tmp === 'fixed') rmSync(tmp, { force: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  const fd = openSync(tmp, flags, opts.mode ?? 0o666);
  const temp: TempFile = { tmp, dir, fd, durable: opts.durable !== false, discard: () => rmSync(tmp, { force: true }) };
  syncedOrDropped(temp, target, () => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
  }, false);
  return temp;
}

/** Runs `step` on the open temporary file, then closes it (unless `close` is false and all went well); on an error drops the file. */
function syncedOrDropped(temp: TempFile, target: string, step: () => void, close = true): void {
  try {
    try {
      step();
    } finally {
      if (close) closeSync(temp.fd);
    }
  } catch (err) {
    if (!close) closeSync(temp.fd);
    temp.discard();
    throw namedError(err, target);
  }
}

/** A write or fsync error names no file; the target is the one the caller knows (a full disk names it). */
function namedError(err: unknown, target: string): unknown {
  if ((err as NodeJS.ErrnoException).code && !(err as NodeJS.ErrnoException).path) (err as NodeJS.ErrnoException).path = target;
  return err;
}

/** The caller's last word, the conflict check, then the rename; a refusal drops the temporary file. */
function renameOver(temp: TempFile, target: string, opts: AtomicWriteOptions): void {
  try {
    opts.beforeRename?.(temp.tmp);
    if (opts.readAs !== undefined) refuseChangedTarget(target, opts.readAs);
    renameWithRetry(temp.tmp, target);
    opts.step?.('rename');
  } catch (err) {
    temp.discard();
    throw err;
  }
}

function refuseChangedTarget(target: string, readAs: string | null): void {
  let now: string | null;
  try {
    now = readFileSync(target, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    now = null;
  }
  if (now === readAs) return;
  throw new MaestroError(
    'KNOWLEDGE_CONFLICT',
    `${target} ${readAs === null ? 'was created' : 'changed'} while Maestro was writing it (another program saved it after Maestro read it): nothing was written, and the file is as that program left it. Run the command again.`,
    { details: { file: target } },
  );
}

function renameWithRetry(from: string, to: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      renameSync(from, to);
      return;
    } catch (err) {
      const wait = RENAME_RETRIES_MS[attempt];
      if ((err as NodeJS.ErrnoException).code !== 'EPERM' || wait === undefined) throw err;
      sleepSync(wait);
    }
  }
}

const fsyncOffLoop = promisify(fsync);

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic for readers.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** fsyncDir in libuv's threadpool. */
async function fsyncDirOffLoop(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    await fsyncOffLoop(fd);
  } catch {
    // As fsyncDir: some file systems refuse fsync on a folder.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
