/**
 * Small tmpfs mounts for the faults suite: a disk that can be filled, and a
 * folder that can be made read-only (chmod is not enough as root). Needs root
 * and `mount`; `tmpfsUnavailable()` says why not. Where mounting is not
 * allowed the suite skips LOUDLY with the reason, except in CI (CI=true),
 * where the suite must run and fails instead. Every mount is tracked, so a
 * test that forgets `unmount()` fails the leak check, which unmounts it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackResource } from '../../src/lib/resources.js';

const MIB = 1024 * 1024;

export interface Tmpfs {
  dir: string;
  /**
   * Writes a file until the disk is full (ENOSPC); returns its path. Files
   * named in `topUp` get newlines appended until ENOSPC too: a file's last
   * page has room a filler cannot take, so a small append there still fits.
   */
  fill(topUp?: string[]): string;
  /** Removes the files fill() wrote. */
  free(): void;
  /** Remounts read-only (true) or read-write (false). */
  setReadOnly(ro: boolean): void;
  unmount(): void;
}

function run(cmd: string, args: string[]): { ok: boolean; err: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, err: `${r.stderr ?? ''}${r.error?.message ?? ''}`.trim() };
}

let probed: string | null | undefined;

/** Null when a tmpfs can be mounted here, else why not. */
export function tmpfsUnavailable(): string | null {
  if (probed !== undefined) return probed;
  probed = (() => {
    if (process.platform !== 'linux') return 'not Linux';
    if (process.getuid?.() !== 0) return 'not running as root (mount needs it)';
    const dir = mkdtempSync(join(tmpdir(), 'maestro-tmpfs-probe-'));
    try {
      const m = run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
      if (!m.ok) return `mount -t tmpfs failed: ${m.err}`;
      run('umount', [dir]);
      return null;
    } finally {
      rmdirSync(dir);
    }
  })();
  return probed;
}

/** Skips loudly with the reason, or in CI fails: there the faults suite must run. */
export function requireTmpfs(suite: string): boolean {
  const why = tmpfsUnavailable();
  if (!why) return true;
  if (process.env.CI === 'true') throw new Error(`${suite}: cannot mount a tmpfs in CI (${why}); the faults suite must run in CI (as root, with mount allowed).`);
  process.stderr.write(`\n${'!'.repeat(78)}\n!! SKIPPED: ${suite} — cannot mount a tmpfs here: ${why}\n!! Run as root where mount is allowed (CI must) to test disk-full and read-only faults.\n${'!'.repeat(78)}\n\n`);
  return false;
}

/** A tmpfs of `sizeMiB` on a folder of its own, or on `at` (an empty folder that stays after the unmount). */
export function mountTmpfs(sizeMiB: number, at?: string): Tmpfs {
  const dir = at ?? mkdtempSync(join(tmpdir(), 'maestro-tmpfs-'));
  const m = run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  if (!m.ok) {
    if (!at) rmdirSync(dir);
    throw new Error(`mount -t tmpfs on ${dir} failed: ${m.err}`);
  }
  const fillers: string[] = [];
  let mounted = true;
  const unmount = () => {
    if (!mounted) return;
    mounted = false;
    untrack();
    const u = run('umount', ['-l', dir]);
    if (!u.ok) throw new Error(`umount ${dir} failed: ${u.err}`);
    if (!at) rmdirSync(dir);
  };
  const untrack = trackResource('other', `tmpfs mount ${dir}`, unmount);
  return {
    dir,
    fill(topUp = []) {
      const path = join(dir, `filler-${fillers.length}`);
      fillers.push(path);
      try {
        return fillFile(path);
      } finally {
        for (const f of topUp) appendUntilFull(f);
      }
    },
    free() {
      for (const f of fillers.splice(0)) unlinkSync(f);
    },
    setReadOnly(ro: boolean) {
      const r = run('mount', ['-o', `remount,${ro ? 'ro' : 'rw'}`, dir]);
      if (!r.ok) throw new Error(`remount ${ro ? 'ro' : 'rw'} ${dir} failed: ${r.err}`);
    },
    unmount,
  };
}

/** Writes `path` until ENOSPC, in halving pieces at the end so that nothing is left over. */
function fillFile(path: string): string {
  const fd = openSync(path, 'w');
  let piece = Buffer.alloc(MIB, 1);
  try {
    for (;;) {
      try {
        writeSync(fd, piece);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        if (piece.length <= 512) return path;
        piece = piece.subarray(0, piece.length / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}

function appendUntilFull(path: string): void {
  const fd = openSync(path, 'a');
  try {
    for (let i = 0; i < 64 * 1024; i++) writeSync(fd, '\n');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}
