/**
 * The orchestrator loop end to end: a real daemon, a real git repository, the
 * scripted agent in real worker processes.
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MaestroError } from '../../src/core/errors.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('orchestrator loop', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('goes on from its events, not its tick: a task created is claimed, and one a person approves is merged, with a tick of an hour', async () => {
    const repo = makeRepo();
    // Longer than any budget below, however busy the machine (budget() scales them at most tenfold).
    daemon = await startTestDaemon({ tickMs: 3_600_000 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    await daemon.orchestrator.idle(); // the tick at start has passed: the next is an hour away
    // Well under the tick: only the task's own events (created, then each status) can move it along.
    const budget = 30_000;
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'exec_review' ? t : t.status === 'needs_attention' ? Promise.reject(new Error(`needs attention: ${t.lastRunError}`)) : null;
    }, 'exec_review', budget);
    await store.tasks.approve(task.id, 'exec_review', 'ann');
    await until(bus, async () => (await store.tasks.get(task.id)).status === 'done', 'done', budget);
    expect(readFileSync(join(repo, 'src/greet.ts'), 'utf8')).toBe("export const greet = () => 'hello';\n");
  });

  it('works a repository on master, registered through the API, from master into master', async () => {
    const repo = makeRepo();
    git(repo, 'branch', '-m', 'main', 'master');
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store } = daemon;
    // Through the API a script is a file in the project's repository (src/daemon/scriptedPaths.ts); untracked, it is in no task's way.
    const script = join(repo, 'agent.yaml');
    copyFileSync(fixture('simple.yaml'), script);
    const res = await daemon.app.inject({ method: 'POST', url: '/api/projects', payload: { name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } } });
    expect(res.statusCode).toBe(201);
    const project = (JSON.parse(res.body) as { project: { id: string } }).project;
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    await taskDone(daemon, task.id, 60_000);
    expect(git(repo, 'branch', '--show-current')).toBe('master');
    expect(git(repo, 'show', 'master:src/greet.ts')).toBe("export const greet = () => 'hello';");
    expect(git(repo, 'branch', '--list', 'main')).toBe('');
  });

  it("starts a claimed task's warm worker before the run is spawned, with the environment the run gets (else the run could not take it)", async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100, warmWorkers: 1 });
    const { store, bus } = daemon;
    const workers = daemon.orchestrator.workers;
    const calls: Array<{ call: 'prestart' | 'spawn'; envs: NodeJS.ProcessEnv[] }> = [];
    const prestart = workers.prestart.bind(workers);
    const spawn = workers.spawn.bind(workers);
    workers.prestart = (envs) => (calls.push({ call: 'prestart', envs }), prestart(envs));
    workers.spawn = (runId, runDir, env) => (calls.push({ call: 'spawn', envs: [env] }), spawn(runId, runDir, env));
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'exec_review' ? t : t.status === 'needs_attention' ? Promise.reject(new Error(`needs attention: ${t.lastRunError}`)) : null;
    }, 'exec_review');
    // The claim announced the execute run's worker, then spawned the run on the same environment (the pool's key).
    // Ticks that claimed nothing meanwhile (the run's start awaits its files' fsyncs) announce nothing.
    const announced = calls.findIndex((c) => c.call === 'prestart' && c.envs.length > 0);
    expect(announced).toBeGreaterThanOrEqual(0);
    const next = calls.slice(announced + 1).find((c) => c.call === 'spawn' || c.envs.length > 0);
    expect(next).toEqual({ call: 'spawn', envs: calls[announced]!.envs });
  });

  it('runs an easy task through execute, review, the human gate and merge to done', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    daemon.orchestrator.kick();

    const atGate = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'exec_review' ? t : t.status === 'needs_attention' ? Promise.reject(new Error(`needs attention: ${t.lastRunError}`)) : null;
    }, 'exec_review');
    expect(atGate.claimedBy).toBeNull();
    expect(atGate.result).toMatchObject({ kind: 'review', verdict: 'approve', branch: `maestro/${task.id}-v1` });
    // Nothing reached main before the human said so.
    expect(existsSync(join(repo, 'src/greet.ts'))).toBe(false);

    await store.tasks.approve(task.id, 'exec_review', 'ann');
    daemon.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(task.id)).status === 'done', 'done');

    expect(readFileSync(join(repo, 'src/greet.ts'), 'utf8')).toBe("export const greet = () => 'hello';\n");
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    const runs = await store.runs.list({ taskId: task.id });
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['execute', 'succeeded'], ['review', 'succeeded']]);
    const statuses = (await store.events.list({ taskId: task.id, type: 'task.status', limit: 100 })).events.map((e) => e.payload.to);
    expect(statuses).toEqual(['queued', 'executing', 'reviewing', 'exec_review', 'merging', 'done']);
    const [decision] = await store.decisions.list({ taskId: task.id });
    expect(decision).toMatchObject({ owner: daemon.orchestrator.owner, breakdown: { rankU: 2, chainInertia: 0, couplingPenalty: 0 } });
    expect(await store.db.all(`SELECT task_id FROM merges`)).toEqual([{ task_id: task.id }]);
    // Each run's trace id is in its job.json, its outbox records, its events and the daemon's log lines.
    for (const run of runs) {
      const job = JSON.parse(readFileSync(join(run.runDir!, 'job.json'), 'utf8'));
      expect(job.traceId).toBe(run.traceId);
      const records = readFileSync(join(run.runDir!, 'outbox.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(records.every((r: { traceId: string }) => r.traceId === run.traceId)).toBe(true);
      expect((await store.events.list({ runId: run.id })).events.every((e) => e.traceId === run.traceId)).toBe(true);
      const lines = daemon.logs.map((l) => JSON.parse(l)).filter((l) => l.runId === run.id);
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['run started', 'run finished']));
      expect(lines.every((l) => l.traceId === run.traceId)).toBe(true);
    }
  });

  it('a worker that cannot start ends its run as failed (never left running) and the task needs attention', async () => {
    const repo = makeRepo();
    // An environment value with a NUL byte: the real spawn() refuses it, as it would refuse any worker it cannot start.
    daemon = await startTestDaemon({ tickMs: 100 }, { workerEnv: { MAESTRO_TEST_BROKEN: 'a\0b' } });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    daemon.orchestrator.kick();
    const stuck = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'needs_attention' ? t : null;
    }, 'needs_attention');
    expect(stuck.lastRunError).toMatch(/MAESTRO_TEST_BROKEN|null bytes|\\0/);
    const runs = await store.runs.list({ taskId: task.id });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ kind: 'execute', status: 'failed', error: expect.stringMatching(/^the worker could not start: /) });
  });
  it('the database going away as a run starts leaves the task to the next tick, never to a person', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    // What PostgreSQL answers while it restarts ("the database system is starting up"), as the run is recorded.
    const start = store.runs.start.bind(store.runs);
    let outages = 1;
    store.runs.start = async (input) => {
      if (outages > 0) {
        outages--;
        throw new MaestroError('DATABASE_UNREACHABLE', 'Cannot reach PostgreSQL at postgres://db/maestro: the database system is starting up');
      }
      return start(input);
    };
    daemon.orchestrator.kick();
    const atGate = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'exec_review' ? t : t.status === 'needs_attention' ? Promise.reject(new Error(`needs attention: ${t.lastRunError}`)) : null;
    }, 'exec_review');
    expect(outages).toBe(0);
    expect(atGate.lastRunError ?? null).toBeNull();
    expect((await store.events.list({ taskId: task.id, type: 'run.refused' })).events).toEqual([]);
  });
});
