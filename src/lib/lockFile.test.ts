import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLockFile, type LockFileOptions } from './lockFile.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function lockPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'maestro-lockfile-'));
  dirs.push(d);
  return join(d, 'x.lock');
}
const opts = (o: Partial<LockFileOptions> = {}): LockFileOptions => ({ what: 'the test lock', deadline: 0, unparseableStaleMs: 60_000, busy: (h) => new Error(`busy: ${h === 'unparseable' ? h : h?.pid}`), ...o });
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('the one lock file', () => {
  it('is published complete with pid and token, refuses a live holder, and is released only by its owner', () => {
    const path = lockPath();
    const release = acquireLockFile(path, { createdAt: 1 }, opts());
    const rec = JSON.parse(readFileSync(path, 'utf8'));
    expect(rec).toMatchObject({ pid: process.pid, createdAt: 1, token: expect.any(String) });
    expect(() => acquireLockFile(path, {}, opts())).toThrow(`busy: ${process.pid}`);
    // Somebody else's lock under the same name (ours was reclaimed meanwhile): our release leaves it.
    writeFileSync(path, JSON.stringify({ ...rec, token: 'theirs' }));
    release();
    expect(existsSync(path)).toBe(true);
    writeFileSync(path, JSON.stringify(rec));
    release();
    expect(readdirSync(join(path, '..'))).toEqual([]);
  });

  it('reclaims a dead holder at once, and an unparseable file only once it is older than the limit', () => {
    const path = lockPath();
    writeFileSync(path, JSON.stringify({ pid: deadPid(), token: 't' }));
    acquireLockFile(path, {}, opts())();
    writeFileSync(path, '{"pi');
    expect(() => acquireLockFile(path, {}, opts())).toThrow('busy: unparseable');
    const old = (Date.now() - 120_000) / 1000;
    utimesSync(path, old, old);
    acquireLockFile(path, {}, opts())();
    writeFileSync(path, '');
    acquireLockFile(path, {}, opts({ unparseableStaleMs: 0 }))();
    expect(readdirSync(join(path, '..'))).toEqual([]);
  });
});
