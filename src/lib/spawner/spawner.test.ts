import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/db.js';
import { poll } from '../../../test/helpers/wait.js';
import { openResources } from '../resources.js';
import type { ExecRequest } from './exec.js';
import { Spawner } from './spawner.js';

const env = { PATH: process.env.PATH ?? '' };
const sh = (script: string, extra: Partial<ExecRequest> = {}): ExecRequest => ({ file: 'sh', args: ['-c', script], cwd: process.cwd(), env, maxBuffer: 1 << 20, ...extra });

/** A zombie (exited, not yet reaped by an init that may never reap) counts as gone. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Calls run directly until the helper is ready (the first call starts it), then returns its pid. */
async function readyHelper(spawner: Spawner): Promise<number> {
  return poll(async () => {
    await spawner.run(sh('true'));
    return spawner.helperReady && spawner.helperPid;
  }, 'the spawner helper to be ready');
}

let spawners: Spawner[] = [];
afterEach(async () => {
  await Promise.all(spawners.map((s) => s.stop()));
  spawners = [];
});
function started(opts: { idleMs?: number } = {}): Spawner {
  const s = new Spawner(opts);
  s.start();
  spawners.push(s);
  return s;
}

describe('Spawner', () => {
  it('runs commands from its helper once it is ready, not from this process', async () => {
    const spawner = started();
    const first = await spawner.run(sh('echo $PPID'));
    expect(Number(first.stdout)).toBe(process.pid); // the helper was still starting: run here
    const helper = await readyHelper(spawner);
    const later = await spawner.run(sh('echo $PPID'));
    expect(Number(later.stdout)).toBe(helper);
    expect(helper).not.toBe(process.pid);
  });

  it('gives the same answers as running the command directly', async () => {
    const spawner = started();
    await readyHelper(spawner);
    const dir = tempDir('maestro-spawner-');
    process.env.MAESTRO_SPAWNER_TEST_SECRET = 'daemon-only';
    try {
      const out = await spawner.run(sh('echo "$GIVEN/${MAESTRO_SPAWNER_TEST_SECRET:-unset}"; pwd; echo oops >&2; exit 3', { cwd: dir, env: { ...env, GIVEN: 'given' } }));
      expect(out).toMatchObject({ code: 3, signal: null, stderr: 'oops\n' });
      // The request's environment, nothing of this process's; the request's folder.
      expect(out.stdout.split('\n')).toEqual(['given/unset', dir, '']);
    } finally {
      delete process.env.MAESTRO_SPAWNER_TEST_SECRET;
    }
    expect(await spawner.run(sh('cat', { input: 'fed on stdin' }))).toMatchObject({ code: 0, stdout: 'fed on stdin' });
    expect(await spawner.run(sh('cat'))).toMatchObject({ code: 0, stdout: '' }); // stdin closed, not left open
    expect(await spawner.run({ ...sh(''), file: 'no-such-binary-here' })).toMatchObject({ code: null, errno: 'ENOENT' });
    expect(await spawner.run(sh('true', { cwd: join(dir, 'missing') }))).toMatchObject({ code: null, errno: 'ENOENT' });
    expect(await spawner.run(sh('kill -TERM $$'))).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(await spawner.run(sh('head -c 3000 /dev/zero', { maxBuffer: 1000 }))).toMatchObject({ errno: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' });
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => spawner.run(sh(`echo ${i}`))));
    expect(many.map((o) => o.stdout.trim())).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  it('fails a command under way when its helper dies, and starts another for the next', async () => {
    const dir = tempDir('maestro-spawner-');
    const spawner = started();
    const helper = await readyHelper(spawner);
    const pidFile = join(dir, 'sleep.pid');
    const running = spawner.run(sh(`echo $$ > ${pidFile}; exec sleep 30`));
    const sleeper = await poll(() => Number(readFileSync(pidFile, 'utf8').trim()) || null, 'the command to start');
    try {
      process.kill(helper, 'SIGKILL');
      expect(await running).toMatchObject({ code: null, errno: 'ESPAWNER' });
    } finally {
      process.kill(sleeper, 'SIGKILL');
    }
    const next = await readyHelper(spawner);
    expect(next).not.toBe(helper);
    expect((await spawner.run(sh('echo $PPID'))).stdout.trim()).toBe(String(next));
  });

  it('a helper that cannot start: commands run here, and after three tries it says so once and stops trying', async () => {
    const dir = tempDir('maestro-spawner-');
    const broken = join(dir, 'broken-child.mjs');
    writeFileSync(broken, 'process.exit(7);\n');
    const said: string[] = [];
    const spawner = new Spawner({ helperFile: broken, onGiveUp: (m) => said.push(m) });
    spawner.start();
    spawners.push(spawner);
    await poll(async () => {
      expect((await spawner.run(sh('echo $PPID'))).stdout.trim()).toBe(String(process.pid));
      return said.length > 0;
    }, 'the spawner to give up on its helper');
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`(${broken}) exited 3 times before it was ready (last: exit code 7); commands run from this process from now on`);
    for (let i = 0; i < 3; i++) expect((await spawner.run(sh('echo $PPID'))).stdout.trim()).toBe(String(process.pid));
    expect(spawner.helperPid).toBeUndefined(); // no fourth helper
    expect(said).toHaveLength(1);
  });

  it('lets an idle helper go, and stop() waits for the commands under way', async () => {
    const spawner = started({ idleMs: 100 });
    const helper = await readyHelper(spawner);
    await poll(() => !alive(helper), 'the idle helper to exit');
    const again = await readyHelper(spawner);
    const slow = spawner.run(sh('sleep 0.3; echo finished'));
    const tracked = () => openResources().filter((r) => r.name.startsWith('spawner')).length;
    expect(tracked()).toBe(1); // the leak check would name a spawner nobody stopped
    await spawner.stop();
    expect((await slow).stdout).toBe('finished\n');
    expect(alive(again)).toBe(false);
    expect(tracked()).toBe(0);
    // Stopped: commands run here again.
    expect(Number((await spawner.run(sh('echo $PPID'))).stdout)).toBe(process.pid);
  });

  it('a helper that became ready with nothing sent to it idles out too', async () => {
    const spawner = started({ idleMs: 100 });
    await spawner.run(sh('true')); // starts it; nothing else is asked
    const helper = await poll(() => spawner.helperReady && spawner.helperPid, 'the helper to be ready');
    await poll(() => !alive(helper), 'the idle helper to exit');
  });

  it('stop() while its helper is still starting ends the helper (it was sent nothing)', async () => {
    const spawner = started();
    await spawner.run(sh('true')); // starts the helper (its Node start takes far longer than this), runs here
    const helper = spawner.helperPid!;
    await spawner.stop();
    expect(alive(helper)).toBe(false);
    // Not counted as a failed start: a started spawner launches again.
    spawner.start();
    expect(await readyHelper(spawner)).not.toBe(helper);
  });

  it('ends its helper when the process that started it is killed', async () => {
    const dir = tempDir('maestro-spawner-');
    const script = join(dir, 'parent.mts');
    writeFileSync(script, [
      `import { Spawner } from ${JSON.stringify(resolve('src/lib/spawner/spawner.ts'))};`,
      'const s = new Spawner(); s.start();',
      "const req = { file: 'true', args: [], cwd: process.cwd(), env: { PATH: process.env.PATH }, maxBuffer: 1024 };",
      'while (!s.helperReady) { await s.run(req); await new Promise((r) => setTimeout(r, 20)); }',
      'console.log(s.helperPid);',
      'setInterval(() => {}, 1000);',
    ].join('\n'));
    const parent = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      parent.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      const helper = await poll(() => Number(out.trim()) || null, 'the parent to print its helper pid');
      expect(alive(helper)).toBe(true);
      parent.kill('SIGKILL');
      await poll(() => !alive(helper), 'the orphaned helper to exit');
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
