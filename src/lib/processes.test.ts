import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { budget } from '../../test/helpers/budget.js';
import { poll } from '../../test/helpers/wait.js';
import { isPidAlive, killGroupMembers, nodeEntry } from './processes.js';

/** The process's /proc stat line, or '' once it is gone. */
function procStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}

describe.skipIf(process.platform !== 'linux')('killGroupMembers', () => {
  it('ends what a group leader left running in its group, and spares the leader and other groups', { timeout: budget(60_000) }, async () => {
    // A leader of its own group that starts a child in that group and prints its pid.
    const leader = spawn(process.execPath, ['-e', "const c=require('child_process').spawn('sleep',['600'],{stdio:'ignore'});console.log(c.pid);setInterval(()=>{},1000)"], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise((r) => leader.once('exit', r));
    const outsider = spawn('sleep', ['600'], { stdio: 'ignore' });
    const outsiderExited = new Promise((r) => outsider.once('exit', r));
    try {
      let out = '';
      leader.stdout!.on('data', (d) => (out += d));
      await poll(() => /\d+\n/.test(out), 'the leader to print its child\'s pid', 30_000);
      const leftover = Number(out.trim());
      expect(isPidAlive(leftover)).toBe(true);
      expect(killGroupMembers(leader.pid!, leader.pid!)).toBe(1);
      // Dead, or a zombie its parent has not reaped yet (state Z): either way no longer running.
      await poll(() => !isPidAlive(leftover) || /\) Z /.test(procStat(leftover)), 'the leftover child to end', 30_000);
      expect(isPidAlive(leader.pid!)).toBe(true);
      expect(isPidAlive(outsider.pid!)).toBe(true);
    } finally {
      leader.kill('SIGKILL');
      outsider.kill('SIGKILL');
      await Promise.all([exited, outsiderExited]);
    }
  });
});

describe('nodeEntry', () => {
  const spawnUrl = new URL('../executor/spawn.ts', import.meta.url).href;
  let saved: string | undefined;
  beforeEach(() => (saved = process.env.MAESTRO_JS_ROOT));
  afterEach(() => (saved === undefined ? delete process.env.MAESTRO_JS_ROOT : (process.env.MAESTRO_JS_ROOT = saved)));

  it('starts a module of the sources through tsx, or from the compiled copy MAESTRO_JS_ROOT names when it has the module, its bundle first', () => {
    const root = mkdtempSync(join(tmpdir(), 'maestro-js-root-'));
    try {
      delete process.env.MAESTRO_JS_ROOT;
      const fromSources = nodeEntry(spawnUrl, 'executor/worker');
      expect(fromSources.file).toMatch(/src\/executor\/worker\.ts$/);
      expect(fromSources.execArgv).toEqual(['--import', 'tsx']);
      // A compiled copy without the module: still the sources.
      process.env.MAESTRO_JS_ROOT = root;
      expect(nodeEntry(spawnUrl, 'executor/worker').file).toBe(fromSources.file);
      mkdirSync(join(root, 'executor'));
      writeFileSync(join(root, 'executor', 'worker.js'), '');
      expect(nodeEntry(spawnUrl, 'executor/worker')).toEqual({ file: join(root, 'executor', 'worker.js'), execArgv: [], cwd: fromSources.cwd });
      writeFileSync(join(root, 'executor', 'worker.bundle.js'), '');
      expect(nodeEntry(spawnUrl, 'executor/worker').file).toBe(join(root, 'executor', 'worker.bundle.js'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('finds a module of the compiled tree from a caller bundled at another depth, and the package root above that tree', () => {
    const pkg = mkdtempSync(join(tmpdir(), 'maestro-pkg-'));
    try {
      delete process.env.MAESTRO_JS_ROOT;
      const tree = join(pkg, 'dist');
      mkdirSync(join(tree, 'executor'), { recursive: true });
      mkdirSync(join(tree, 'lib', 'spawner'), { recursive: true });
      writeFileSync(join(tree, 'executor', 'worker.bundle.js'), '');
      writeFileSync(join(tree, 'lib', 'spawner', 'child.js'), '');
      // The spawner's code inside the worker's bundle: its own URL is the bundle's, in executor/, not lib/spawner/.
      const bundled = pathToFileURL(join(tree, 'executor', 'worker.bundle.js')).href;
      expect(nodeEntry(bundled, 'lib/spawner/child')).toEqual({ file: join(tree, 'lib', 'spawner', 'child.js'), execArgv: [], cwd: pkg });
      expect(nodeEntry(pathToFileURL(join(tree, 'lib', 'spawner', 'spawner.js')).href, 'lib/spawner/child').file).toBe(join(tree, 'lib', 'spawner', 'child.js'));
      expect(() => nodeEntry(bundled, 'lib/spawner/nothing')).toThrow(/no lib\/spawner\/nothing in any folder above/);
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
