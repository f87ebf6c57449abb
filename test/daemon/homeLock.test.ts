import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireHomeLock } from '../../src/daemon/homeLock.js';
import { trackResource } from '../../src/lib/resources.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { scriptArgs } from '../helpers/script.js';

const RACER = fileURLToPath(new URL('./lockRacer.ts', import.meta.url));

function deadPid(): number {
  // A pid that surely is not running: a child that has exited.
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

async function race(home: string, n: number): Promise<{ won: boolean; message?: string }[]> {
  const kids = Array.from({ length: n }, () => {
    const child = spawn(process.execPath, [...scriptArgs(RACER), home], { stdio: ['pipe', 'pipe', 'inherit'] });
    const untrack = trackResource('process', `lock racer ${child.pid}`, () => child.kill('SIGKILL'));
    let out = '';
    const ready = new Promise<void>((resolve) => child.stdout.on('data', (d) => { out += d; if (out.includes('ready\n')) resolve(); }));
    const result = new Promise<{ won: boolean; message?: string }>((resolve) => {
      child.stdout.on('data', () => {
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line));
      });
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => { untrack(); resolve(); }));
    return { child, ready, result, exited };
  });
  await Promise.all(kids.map((k) => k.ready));
  for (const k of kids) k.child.stdin.write('go\n');
  const results = await Promise.all(kids.map((k) => k.result));
  for (const k of kids) k.child.stdin.end();
  await Promise.all(kids.map((k) => k.exited));
  return results;
}

describe('one daemon per MAESTRO_HOME', () => {
  afterEach(() => removeTempDirs());

  it('refuses a second daemon while the first lives, and frees the home on release', () => {
    const home = tempDir();
    const lock = acquireHomeLock(home);
    expect(() => acquireHomeLock(home, process.pid + 1)).toThrow(/Another Maestro daemon \(pid \d+/);
    expect(() => acquireHomeLock(home, process.pid + 1)).toThrow(expect.objectContaining({ code: 'HOME_IN_USE' }));
    lock.release();
    expect(existsSync(join(home, 'daemon.lock'))).toBe(false);
    acquireHomeLock(home).release();
  });

  it('reclaims a stale lock left by a dead daemon', () => {
    const home = tempDir();
    writeFileSync(join(home, 'daemon.lock'), JSON.stringify({ pid: deadPid(), host: 'x', startedAt: 0 }));
    const lock = acquireHomeLock(home);
    lock.release();
  });

  it('reclaims an empty lock and a garbage lock (debris of a start on a full disk), and leaves no temp files', () => {
    for (const content of ['', '{"pi']) {
      const home = tempDir();
      writeFileSync(join(home, 'daemon.lock'), content);
      const lock = acquireHomeLock(home);
      expect(JSON.parse(readFileSync(join(home, 'daemon.lock'), 'utf8')).pid).toBe(process.pid);
      expect(readdirSync(home).sort()).toEqual(['daemon.lock']);
      lock.release();
      expect(readdirSync(home)).toEqual([]);
    }
  });

  it('reclaims an empty reclaim file left behind', () => {
    const home = tempDir();
    writeFileSync(join(home, 'daemon.lock'), '');
    writeFileSync(join(home, 'daemon.lock.reclaim'), '');
    acquireHomeLock(home).release();
    expect(readdirSync(home)).toEqual([]);
  });

  it('six daemons racing for an empty lock: exactly one wins', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'daemon.lock'), '');
    const results = await race(home, 6);
    expect(results.filter((r) => r.won)).toHaveLength(1);
    for (const r of results.filter((x) => !x.won)) expect(r.message).toMatch(/already uses/);
  });

  it('six daemons racing for a stale lock: exactly one wins', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'daemon.lock'), JSON.stringify({ pid: deadPid(), host: 'x', startedAt: 0 }));
    const results = await race(home, 6);
    expect(results.filter((r) => r.won)).toHaveLength(1);
    for (const r of results.filter((x) => !x.won)) expect(r.message).toMatch(/already uses/);
  });
});
