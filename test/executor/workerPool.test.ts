/**
 * Warm workers (src/executor/workerPool.ts) keep the contract of cold ones:
 * one process runs runs one after another; its death fails only the run it
 * is on; with its channel closed (the daemon gone) it finishes that run and
 * exits, so the next daemon can adopt the run by pid; SIGTERM interrupts it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendInbox } from '../../src/executor/protocol/inbox.js';
import { writeJob } from '../../src/executor/protocol/job.js';
import { readOutbox, type OutboxRecord } from '../../src/executor/protocol/outbox.js';
import type { WorkerHandle } from '../../src/executor/spawn.js';
import { WorkerPool } from '../../src/executor/workerPool.js';
import { agentEnv } from '../../src/lib/agentEnv.js';
import { isPidAlive } from '../../src/lib/processes.js';
import { sandbox, type Sandbox } from './helpers.js';
import { waitForRecord } from './waitFor.js';
import { poll } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

const isFinal = (r: OutboxRecord) => r.type === 'result' || r.type === 'error';
const finalOf = (runDir: string) => readOutbox(runDir).records.find(isFinal);
const env = agentEnv(process.env);

/** An execute run of its own task (its own worktree) on `script`. */
function execRun(sb: Sandbox, name: string, script: string, extra: Record<string, unknown> = {}): string {
  const runDir = sb.runDir(name);
  writeJob(runDir, sb.job({ kind: 'execute', taskId: `T-${name}`, inboxPollMs: 20, heartbeatMs: 200, ...extra } as never, script, name));
  return runDir;
}

/** A process's arguments, program first. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const parentOf = (entry: string) => {
    try {
      // The parent is the field after the state, past the command name in parentheses (which may hold spaces).
      return Number(readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
    } catch {
      return null; // gone meanwhile
    }
  };
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e) && parentOf(e) === pid).map(Number);
}

/** Resolves once the process is gone (polls: an adopted pid is not our child to wait on). */
async function gone(pid: number, timeoutMs = 60_000): Promise<boolean> {
  return poll(() => !isPidAlive(pid), `process ${pid} to end`, timeoutMs).then(() => true, () => false);
}

describe('warm worker pool', () => {
  let pool: WorkerPool | null = null;
  afterEach(async () => {
    await pool?.stop();
    pool = null;
  });

  it('one warm worker runs two runs in sequence, and is kept for the next', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out/{{title}}.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 1 });
    const a = execRun(sb, 'a', script);
    const first = pool.run(a, env);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(finalOf(a)?.type).toBe('result');
    expect(pool.idleCount).toBe(1);

    const b = execRun(sb, 'b', script);
    const second = pool.run(b, env);
    expect(second.pid).toBe(first.pid);
    // The first run's handle is spent: stopping or killing it now must not touch the run after it.
    first.stop();
    first.kill();
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(finalOf(b)?.type).toBe('result');
    // Both runs' heartbeats come from the one process.
    const beats = [a, b].map((d) => readOutbox(d).records.filter((r) => r.type === 'heartbeat').map((r) => (r as { pid: number }).pid));
    expect(new Set(beats.flat())).toEqual(new Set([first.pid]));
    expect(isPidAlive(first.pid)).toBe(true);
  });

  it('a warm worker runs from the build\'s bundle, and its git goes through the spawner helper of the same build', { timeout: budget(120_000) }, async () => {
    // The test run's build (globalSetup.ts) is made as `npm run build` makes dist/: tsc, then the worker's bundle.
    const build = process.env.MAESTRO_JS_ROOT;
    expect(build, 'the global setup names the compiled build').toBeTruthy();
    using sb = sandbox();
    pool = new WorkerPool({ warm: 1 });
    const run = pool.run(execRun(sb, 'a', sb.script([{ match: { role: 'execute' }, actions: [{ text: 'thinking' }, { hang: true }] }])), env);
    await waitForRecord(sb.runDir('a'), (r) => r.type === 'token');
    expect(commandLine(run.pid)).toContain(join(build!, 'executor', 'worker.bundle.js'));
    // The worktree stage ran git through the helper: one found from inside the bundle, in another folder than the spawner's own (nodeEntry).
    expect(childrenOf(run.pid).map(commandLine)).toContainEqual(expect.arrayContaining([join(build!, 'lib', 'spawner', 'child.js')]));
    run.stop();
    expect((await run.exited).code).toBe(0);
  });

  it('starts workers for runs about to start, one each, and those runs take them; another environment gets its own', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out/{{title}}.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 1 });
    pool.prestart([env, env]);
    expect(pool.idleCount).toBe(2);
    // Announced again while they start: the two are enough, no more processes.
    pool.prestart([env, env]);
    expect(pool.idleCount).toBe(2);
    const dirs = [execRun(sb, 'a', script), execRun(sb, 'b', script)];
    const runs = dirs.map((d) => pool!.run(d, env));
    expect(pool.idleCount).toBe(0);
    for (const h of runs) expect(await h.exited).toEqual({ code: 0, signal: null });
    expect(dirs.map((d) => finalOf(d)?.type)).toEqual(['result', 'result']);
    // Each run ran on a process of its own, started before the run was asked for.
    expect(new Set(runs.map((h) => h.pid)).size).toBe(2);
    // A run with another environment never takes a worker started for another one.
    const other = { ...env, MAESTRO_TEST_MARK: 'other' };
    pool.prestart([other]);
    const idle = pool.idleCount;
    const third = pool.run(execRun(sb, 'c', script), other);
    expect(pool.idleCount).toBe(idle - 1);
    expect(runs.map((h) => h.pid)).not.toContain(third.pid);
    expect(await third.exited).toEqual({ code: 0, signal: null });
  });

  it('beyond the warm ones, a worker back from a run waits a while for the next one before it is let go', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out/{{title}}.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 1, burstIdleMs: 60_000 });
    const first = [pool.run(execRun(sb, 'a', script), env), pool.run(execRun(sb, 'b', script), env)];
    for (const h of first) expect(await h.exited).toEqual({ code: 0, signal: null });
    // Both are kept, the second only for burstIdleMs: the next two runs start on them, no process of their own.
    expect(pool.idleCount).toBe(2);
    const next = [pool.run(execRun(sb, 'c', script), env), pool.run(execRun(sb, 'd', script), env)];
    expect(new Set(next.map((h) => h.pid))).toEqual(new Set(first.map((h) => h.pid)));
    for (const h of next) expect(await h.exited).toEqual({ code: 0, signal: null });
  });

  it('a worker beyond the warm ones is let go once its burst wait is over', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out/{{title}}.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 1, burstIdleMs: 200 });
    const runs = [pool.run(execRun(sb, 'a', script), env), pool.run(execRun(sb, 'b', script), env)];
    for (const h of runs) expect(await h.exited).toEqual({ code: 0, signal: null });
    await poll(() => pool!.idleCount === 1, 'the extra worker to be let go', 60_000);
    await poll(() => runs.filter((h) => !isPidAlive(h.pid)).length === 1, 'one of the two workers to exit', 60_000);
    expect(runs.filter((h) => isPidAlive(h.pid)).length).toBe(1);
  });

  /**
   * One warm worker back from a run, `spoil` done to it, then the next run handed to it: that run ends with
   * the worker, as any worker's death ends a run, and the run after it starts on a new worker and finishes.
   */
  async function handOffToSpoiled(spoil: (worker: WorkerHandle) => void): Promise<void> {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out/{{title}}.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 1 });
    const first = pool.run(execRun(sb, 'a', script), env);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    spoil(first);
    const second = pool.run(execRun(sb, 'b', script), env);
    expect(second.pid).toBe(first.pid);
    expect(await second.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const third = pool.run(execRun(sb, 'c', script), env);
    expect(third.pid).not.toBe(first.pid);
    expect(await third.exited).toEqual({ code: 0, signal: null });
  }

  it('a warm worker killed while idle, before the pool noticed, fails the run handed to it, and only that run', { timeout: budget(120_000) }, () =>
    handOffToSpoiled((worker) => {
      // Killed, and dead to the kernel (a zombie: its end of the channel is closed) before this process has had
      // a turn of its event loop to notice: the pool still holds it as idle and connected.
      process.kill(worker.pid, 'SIGKILL');
      const state = () => readFileSync(`/proc/${worker.pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
      for (const start = Date.now(); state() !== 'Z' && Date.now() - start < budget(30_000);) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      expect(state()).toBe('Z');
    }));

  it('a hand-off that fails on the worker\'s channel (EPIPE, as CI once saw) ends that run with the worker, and the pool goes on', { timeout: budget(120_000) }, () =>
    handOffToSpoiled(({ child, stderrTail }) => {
      // Any 'error' on a worker's process is kept with its stderr; without a listener it would be thrown here.
      child.emit('error', new Error('signal failed'));
      expect(stderrTail()).toMatch(/worker \d+: signal failed/);
      // The next send fails as Node fails a write to a closed channel: the error goes to the callback, or
      // without one is emitted as 'error' on the child process.
      child.send = ((_message: unknown, callback?: (err: Error | null) => void) => {
        const ex = Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' });
        process.nextTick(() => (typeof callback === 'function' ? callback(ex) : child.emit('error', ex)));
        return false;
      }) as typeof child.send;
    }));

  it('a warm worker killed mid-run fails only that run: another worker\'s run finishes and takes the next run', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const hang = sb.script([{ match: { role: 'execute' }, actions: [{ text: 'stuck' }, { hang: true }] }]);
    const ask = sb.script([{ match: { role: 'execute' }, actions: [{ ask: 'Which name?' }, { write: { path: 'name.txt', content: '{{reply}}\n' } }] }]);
    const write = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'done.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 2 });
    const doomedDir = execRun(sb, 'doomed', hang);
    const otherDir = execRun(sb, 'other', ask);
    const doomed = pool.run(doomedDir, env);
    const other = pool.run(otherDir, env);
    expect(other.pid).not.toBe(doomed.pid);
    await waitForRecord(doomedDir, (r) => r.type === 'token');
    const asked = await waitForRecord(otherDir, (r) => r.type === 'clarify');

    doomed.kill();
    expect((await doomed.exited).signal).toBe('SIGKILL');
    expect(finalOf(doomedDir)).toBeUndefined();

    // The other run, in its own warm process, goes on to its result.
    appendInbox(otherDir, { type: 'reply', text: 'ada', replyTo: (asked as { clarifyId: string }).clarifyId });
    expect(await other.exited).toEqual({ code: 0, signal: null });
    expect(finalOf(otherDir)?.type).toBe('result');

    // The next run goes to the surviving warm worker, never the dead one.
    const nextDir = execRun(sb, 'next', write);
    const next = pool.run(nextDir, env);
    expect(next.pid).toBe(other.pid);
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(finalOf(nextDir)?.type).toBe('result');
  });

  it('with its channel closed (the daemon gone) it finishes its run, then exits; an idle one exits at once', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const ask = sb.script([{ match: { role: 'execute' }, actions: [{ ask: 'Tabs or spaces?' }, { write: { path: 'style.txt', content: '{{reply}}\n' } }] }]);
    const write = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'done.txt', content: 'x\n' } }] }]);
    pool = new WorkerPool({ warm: 2 });
    const idleDir = execRun(sb, 'idle', write);
    const idle = pool.run(idleDir, env);
    const busyDir = execRun(sb, 'busy', ask);
    const busy = pool.run(busyDir, env);
    expect((await idle.exited).code).toBe(0);
    const asked = await waitForRecord(busyDir, (r) => r.type === 'clarify');

    busy.detach();
    await pool.stop();
    expect(await gone(idle.pid)).toBe(true);
    // Still on its run, as a cold worker would be after a kill -9 of the daemon: the next daemon adopts it by pid.
    expect(isPidAlive(busy.pid)).toBe(true);
    appendInbox(busyDir, { type: 'reply', text: 'tabs', replyTo: (asked as { clarifyId: string }).clarifyId });
    await waitForRecord(busyDir, isFinal);
    expect(finalOf(busyDir)?.type).toBe('result');
    expect(await gone(busy.pid)).toBe(true);
  });

  it('on SIGTERM mid-run it ends the run INTERRUPTED and exits', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const hang = sb.script([{ match: { role: 'execute' }, actions: [{ text: 'thinking' }, { hang: true }] }]);
    pool = new WorkerPool({ warm: 1 });
    const runDir = execRun(sb, 'term', hang);
    const handle = pool.run(runDir, env);
    await waitForRecord(runDir, (r) => r.type === 'token');
    handle.stop();
    expect(await handle.exited).toEqual({ code: 0, signal: null });
    expect(finalOf(runDir)).toMatchObject({ type: 'error', code: 'INTERRUPTED' });
    expect(await gone(handle.pid)).toBe(true);
    expect(pool.idleCount).toBe(0);
  });
  it('runs at the nice value the pool is given: the worker, and a check its run starts, both warm and cold', { timeout: budget(120_000) }, async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'out/{{title}}.txt', content: 'x\n' } }] }]);
    // The check writes its own nice value (field 19 of /proc/<pid>/stat; sh's name holds no space).
    const niceCheck = (file: string) => [{ name: 'nice', command: ['sh', '-c', `cut -d' ' -f19 /proc/$$/stat > ${file}`] }];
    for (const warm of [1, 0]) {
      pool = new WorkerPool({ warm, nice: 7 });
      const file = join(sb.root, `nice-${warm}.txt`);
      const handle = pool.run(execRun(sb, `nice-${warm}`, script, { checks: niceCheck(file) }), env);
      expect(getPriority(handle.pid)).toBe(7);
      expect(await handle.exited).toEqual({ code: 0, signal: null });
      expect(readFileSync(file, 'utf8').trim()).toBe('7');
      await pool.stop();
    }
    // Unset, a worker runs as the daemon does.
    pool = new WorkerPool({ warm: 1 });
    const plain = pool.run(execRun(sb, 'plain', script), env);
    expect(getPriority(plain.pid)).toBe(getPriority());
    await plain.exited;
  });
});
