/**
 * Crash-safe file replacement: write `<target>.tmp`, fsync it, rename it over
 * the target, fsync the directory. A kill at any point leaves either the old
 * file or the new one, never a torn one. Callers hold `withCorpusLock`, which
 * is what makes the fixed tmp name safe.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface AtomicWriteHooks {
  /** Test seam: called after the temporary file is durable and before the rename. */
  beforeRename?: (tmpPath: string) => void;
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function writeFileAtomic(target: string, data: string, hooks: AtomicWriteHooks = {}): void {
  const tmp = `${target}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  hooks.beforeRename?.(tmp);
  renameWithRetry(tmp, target);
  fsyncDir(dirname(target));
}

/** EPERM on rename (a reader holding the file on some platforms) is retried twice: 20 ms, 40 ms (FORMATS §6). */
function renameWithRetry(from: string, to: string): void {
  for (const wait of [20, 40, -1]) {
    try {
      renameSync(from, to);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPERM' || wait < 0) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
    }
  }
}
