/**
 * Two daemons on one PostgreSQL and one shared remote: a task whose daemon goes away with its execute finished is
 * reviewed by the other daemon, from the commit the first one pushed, and not executed again. Before, a SIGTERM of
 * a daemon mid-execute left the task in `reviewing` under its claim; when the lease ran out another daemon sent it
 * back to ready and it was executed again from scratch (a team trial: with a real model the person paid twice, and
 * the finished work was thrown away). The same after a kill -9 of a daemon whose task stood at review.
 *
 * Daemon build-1 runs as a `maestro serve` process (it gets a real SIGTERM, or a kill -9); build-2 runs in this
 * process. build-1's lease is ten minutes: what happens before it ends is the hand-over, not the expiry.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import type { Run } from '../../src/core/types.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { git, sharedRemote } from '../helpers/repo.js';
import { GiveUp, poll } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { maestroArgs } from '../helpers/maestro.js';
import { cleanEnv } from '../cli/helpers.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const LONG_LEASE_MS = 600_000;

interface Served {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

/** `maestro serve` as its own process, its home's config.json naming it and the database. */
function serve(root: string, name: string, database: string, leaseMs: number): Served {
  const home = join(root, `home-${name}`);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ name, database, tickMs: 100, leaseMs, logLevel: 'warn' }));
  const jsRoot = process.env.MAESTRO_JS_ROOT;
  const child = spawn(process.execPath, [...maestroArgs(), 'serve', '--home', home, '--port', '0', '--no-demo'], {
    env: cleanEnv(jsRoot ? { MAESTRO_JS_ROOT: jsRoot } : {}),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
  const untrack = trackResource('process', `daemon ${name} (${home})`, () => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (untrack(), resolve(code))));
  return { child, exited, stderr: () => err };
}

const runsOf = async (store: Store, taskId: string, kind: Run['kind']) => (await store.runs.list({ taskId })).filter((r) => r.kind === kind);

describe.skipIf(!pgAvailable())('a task whose daemon goes away between stages', () => {
  const open: { stop: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.stop();
    removeTempDirs();
  });

  async function setUp(script: string, leaseMs = LONG_LEASE_MS) {
    const { url, db } = await freshPostgres();
    await db.close();
    const store = createStore(openDatabase(url));
    open.push({ stop: () => store.close() });
    const root = tempDir('maestro-handover-');
    const remote = sharedRemote(root);
    const scriptPath = join(root, 'script.yaml');
    writeFileSync(scriptPath, script);
    const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: scriptPath }, autoApproveAfterMs: 0 } });
    const task = await store.tasks.create({ projectId: project.id, title: 'handover', complexity: 'easy', ownedFiles: ['out/a.txt'] });
    const one = serve(root, 'build-1', url, leaseMs);
    open.push({ stop: async () => (one.child.kill('SIGKILL'), await one.exited) });
    /** Fails at once when build-1 stopped on its own. */
    const alive = () => {
      if (one.child.exitCode !== null || one.child.signalCode !== null) throw new GiveUp(`build-1 stopped: ${one.stderr()}`);
    };
    return { url, store, root, remote, scriptPath, task, one, alive };
  }

  /** build-1's execute run, in its agent stage (the scripted agent waits there), with the lease build-1 holds on the task. */
  async function executingOnOne(store: Store, taskId: string, alive: () => void) {
    const run = await poll(async () => {
      alive();
      const r = (await runsOf(store, taskId, 'execute')).find((x) => x.status === 'running');
      if (!r) return null;
      const phases = (await store.events.list({ taskId, type: 'run.phase' })).events;
      return phases.some((e) => e.runId === r.id && e.payload.stage === 'agent' && e.payload.state === 'start') ? r : null;
    }, "build-1's execute run in its agent stage", 120_000);
    const held = await store.tasks.get(taskId);
    expect(held).toMatchObject({ status: 'executing', claimedBy: 'build-1' });
    return { run, leaseEndsAt: held.leaseExpiresAt! };
  }

  it('SIGTERM mid-execute: the run finishes, the task is released, and the other daemon reviews the commit build-1 made, with no second execute', { timeout: budget(240_000) }, async () => {
    const { url, store, root, remote, task, one, alive } = await setUp(
      'steps:\n  - match: { role: execute }\n    actions:\n      - wait: 4000\n      - write: { path: "out/a.txt", content: "from build-1\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n',
    );
    const { run, leaseEndsAt } = await executingOnOne(store, task.id, alive);
    // build-2 is up before build-1 stops (with no other work, it claims nothing meanwhile).
    const two = await startTestDaemon({ name: 'build-2', database: url, tickMs: 100 });
    open.push(two);

    one.child.kill('SIGTERM');
    expect(await one.exited).toBe(0);
    // build-1 let its stage finish, applied the run's result and let the task go.
    expect((await store.runs.get(run.id)).status).toBe('succeeded');
    const released = (await store.events.list({ taskId: task.id, type: 'task.released' })).events;
    expect(released).toHaveLength(1);
    expect(released[0]!.payload).toMatchObject({ owner: 'build-1', status: 'reviewing' });
    // The commit build-1 made, in its own worktree.
    const made = git(join(root, 'home-build-1', 'worktrees', task.projectId, `${task.id}-v1`), 'rev-parse', 'HEAD');

    const done = await poll(async () => {
      const t = await store.tasks.get(task.id);
      if (t.status === 'needs_attention' || t.status === 'ready') throw new GiveUp(`the task went ${t.status}: ${t.lastRunError}`);
      return t.status === 'done' ? t : null;
    }, 'the task done by build-2', 120_000);
    expect(done.result?.commitSha).toBe(made);

    const over = (await store.events.list({ taskId: task.id, type: 'task.taken_over' })).events;
    expect(over).toHaveLength(1);
    expect(over[0]!.payload).toMatchObject({ owner: 'build-2', previousOwner: 'build-1', status: 'reviewing' });
    // Taken at once, not when the lease build-1 held would have ended.
    expect(over[0]!.at).toBeLessThan(leaseEndsAt);
    // One execute (build-1's); the review was build-2's.
    expect((await runsOf(store, task.id, 'execute')).map((r) => [r.owner, r.status])).toEqual([['build-1', 'succeeded']]);
    expect((await runsOf(store, task.id, 'review')).map((r) => [r.owner, r.status])).toEqual([['build-2', 'succeeded']]);
    // The remote's main has build-1's commit, the one the file came in by.
    expect(git(remote, 'merge-base', '--is-ancestor', made, 'main')).toBe('');
    expect(git(remote, 'log', '--format=%H', 'main', '--', 'out/a.txt')).toBe(made);
    // What build-1's execute staged for the knowledge review went into the database with it before build-1 let the
    // task go (null: it staged nothing), so build-2 names no run as elsewhere.
    expect(await two.store.runs.knowledgeOf([run.id])).toEqual(new Map([[run.id, null]]));
    const detail = (await two.app.inject({ method: 'GET', url: `/api/tasks/${task.id}` })).json() as { knowledgeElsewhere: unknown };
    expect(detail.knowledgeElsewhere).toEqual([]);
  });

  it('SIGTERM with the branch not on the shared remote: the other daemon sends the task to ready and says why', { timeout: budget(240_000) }, async () => {
    const { url, store, remote, task, one, alive } = await setUp(
      'steps:\n  - match: { role: execute }\n    actions:\n      - wait: 4000\n      - write: { path: "out/a.txt", content: "done\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n',
    );
    // The remote refuses task branches: build-1's push after its execute fails, so its commit stays on its host.
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/heads/maestro/*) echo "no task branches" >&2; exit 1;; esac; done\nexit 0\n');
    chmodSync(hook, 0o755);
    await executingOnOne(store, task.id, alive);
    const two = await startTestDaemon({ name: 'build-2', database: url, tickMs: 100 });
    open.push(two);

    one.child.kill('SIGTERM');
    expect(await one.exited).toBe(0);
    expect((await store.events.list({ taskId: task.id, type: 'git.push_failed' })).events.length).toBeGreaterThan(0);
    expect((await store.events.list({ taskId: task.id, type: 'task.released' })).events).toHaveLength(1);

    // build-2 takes it over at review, finds no commit to review, and sends it to ready, saying why.
    const refused = await poll(async () => (await store.events.list({ taskId: task.id, type: 'run.refused' })).events[0] ?? null, 'the review refused on build-2', 120_000);
    rmSync(hook);
    expect(String(refused.payload.message)).toMatch(/^The execute of \S+ finished on daemon build-1, but its commit [0-9a-f]{12} was not on the shared remote \(its branch maestro\/\S+ was not pushed there before that daemon stopped\): the task runs again from ready\.$/);
    const toReady = (await store.events.list({ taskId: task.id, type: 'task.status' })).events.find((e) => e.payload.from === 'reviewing' && e.payload.to === 'ready');
    expect(toReady?.payload).toMatchObject({ owner: 'build-2' });
    // And it is executed again, on build-2, from scratch.
    await poll(async () => (await runsOf(store, task.id, 'execute')).some((r) => r.owner === 'build-2' && r.status === 'succeeded'), "build-2's execute", 120_000);
  });

  it('kill -9 with the task at review: the other daemon reviews it once the lease ends, with no second execute', { timeout: budget(240_000) }, async () => {
    const { url, store, scriptPath, task, one, alive } = await setUp(
      'steps:\n  - match: { role: execute }\n    actions:\n      - write: { path: "out/a.txt", content: "done\\n" }\n  - match: { role: review }\n    actions:\n      - hang: true\n',
      // Short: nothing hands the task over after a kill -9 but the lease's end (as in multihost.test.ts).
      4000,
    );
    const review = await poll(async () => {
      alive();
      return (await runsOf(store, task.id, 'review')).find((r) => r.status === 'running' && r.workerPid !== null) ?? null;
    }, "build-1's review run", 120_000);
    const made = (await store.tasks.get(task.id)).result?.commitSha;
    expect(typeof made).toBe('string');
    // build-2's reviewer answers.
    writeFileSync(scriptPath, 'steps:\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    one.child.kill('SIGKILL');
    await one.exited;
    // Its worker runs on in its own process group (a restart would adopt it): ended here, as the machine's end would.
    try {
      process.kill(-review.workerPid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
    const two = await startTestDaemon({ name: 'build-2', database: url, tickMs: 100 });
    open.push(two);

    await poll(async () => {
      const t = await store.tasks.get(task.id);
      if (t.status === 'needs_attention' || t.status === 'ready') throw new GiveUp(`the task went ${t.status}: ${t.lastRunError}`);
      return t.status === 'done';
    }, 'the task done by build-2', 120_000);
    expect((await runsOf(store, task.id, 'execute')).map((r) => r.owner)).toEqual(['build-1']);
    const reviews = await runsOf(store, task.id, 'review');
    expect(reviews.map((r) => [r.owner, r.status])).toEqual([['build-1', 'failed'], ['build-2', 'succeeded']]);
    expect(reviews[0]!.error).toBe('its daemon lost the lease on the task');
    expect((await store.tasks.get(task.id)).result?.commitSha).toBe(made);
  });
});
