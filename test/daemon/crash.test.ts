/**
 * kill -9 of the daemon at several points: after each restart it adopts live
 * workers, resumes dead runs, and in the end every task is done, merged
 * exactly once, with a status history that has no gap.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { openMigratedDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import type { DBAdapter } from '../../src/store/db.js';
import { freshPostgres, freshSqlite, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { git, makeRepo } from '../helpers/repo.js';
import { GiveUp, poll } from '../helpers/wait.js';
import { eventLogProblems, runWorkload, workloadClock } from './crashWorkload.js';
import { budget } from '../helpers/budget.js';
import { maestroArgs } from '../helpers/maestro.js';
import { scriptArgs } from '../helpers/script.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/slow.yaml', import.meta.url));
const DRIVER = fileURLToPath(new URL('./crashDriver.ts', import.meta.url));

function startDaemonProcess(home: string): { child: ChildProcess; exited: Promise<void> } {
  // Its log goes to $home/logs/daemon.log (kept when KEEP_TEST_DIRS is set, for a post-mortem).
  const child = spawn(process.execPath, [...maestroArgs(), 'serve', '--home', home, '--port', '0', '--no-demo'], { stdio: 'ignore', env: { ...process.env, MAESTRO_LOG_LEVEL: 'info' } });
  const untrack = trackResource('process', `daemon ${child.pid}`, () => child.kill('SIGKILL'));
  const exited = new Promise<void>((resolve) => child.once('exit', () => { untrack(); resolve(); }));
  return { child, exited };
}

describe('crash recovery', () => {
  let store: Store | null = null;
  afterEach(async () => {
    await store?.close();
    store = null;
    if (!process.env.KEEP_TEST_DIRS) removeTempDirs();
  });

  it('kill -9 at several points: every task merged exactly once, the event log complete', { timeout: budget(300_000) }, async () => {
    const home = tempDir('maestro-home-');
    writeFileSync(join(home, 'config.json'), JSON.stringify({ tickMs: 100, maxConcurrentRunsPerProject: 3 }));
    const repo = makeRepo();
    store = createStore(await openMigratedDatabase(`sqlite:${join(home, 'maestro.db')}`));
    const project = await store.projects.create({ name: 'crashy', repoPath: repo, config: { provider: { kind: 'scripted', script: SCRIPT }, autoApproveAfterMs: 0 } });
    const titles = ['alpha', 'beta', 'gamma', 'delta'];
    for (const title of titles) await store.tasks.create({ projectId: project.id, title, complexity: 'easy', ownedFiles: [`out/${title}.txt`] });
    const s = store;
    let seen = 0;
    const noneStuck = async () => {
      const stuck = (await s.tasks.list({ projectId: project.id })).find((t) => t.status === 'needs_attention');
      if (stuck) throw new GiveUp(`${stuck.title} needs attention: ${stuck.lastRunError}`);
    };
    // A daemon that dies on its own (not by our kill) ends the wait at once, with where its log is.
    const alive = (d: { child: ChildProcess }) => {
      const end = d.child.exitCode ?? d.child.signalCode;
      if (end !== null) throw new GiveUp(`the daemon exited by itself (${end}); its log: ${join(home, 'logs', 'daemon.log')} (KEEP_TEST_DIRS=1 keeps it)`);
    };
    const eventAfter = (d: { child: ChildProcess }, type: string, to?: string) => async () => {
      alive(d);
      await noneStuck();
      const { events } = await s.events.list({ after: seen, limit: 1000 });
      const hit = events.find((e) => e.type === type && (to === undefined || e.payload.to === to));
      return hit ? (seen = hit.id, hit) : null;
    };

    for (const [type, to] of [['run.started'], ['run.phase'], ['task.status', 'reviewing'], ['task.status', 'merging'], ['task.status', 'done']] as const) {
      const d = startDaemonProcess(home);
      const t0 = Date.now();
      await poll(eventAfter(d, type, to), `${type} ${to ?? ''}`, 90_000);
      process.stderr.write(`crash test: kill -9 after ${type} ${to ?? ''} (${Date.now() - t0} ms)\n`);
      d.child.kill('SIGKILL');
      await d.exited;
    }
    const last = startDaemonProcess(home);
    await poll(async () => (alive(last), await noneStuck(), (await s.tasks.list({ projectId: project.id })).every((t) => t.status === 'done')), 'every task done', 120_000);
    last.child.kill('SIGTERM');
    await last.exited;

    const merges = await s.db.all<{ task_id: string }>(`SELECT task_id FROM merges`);
    expect(merges).toHaveLength(titles.length);
    expect(readdirSync(join(repo, 'out')).sort()).toEqual(titles.map((t) => `${t}.txt`).sort());
    // Each task's file reached main by exactly one commit.
    for (const t of titles) expect(git(repo, 'log', '--format=%H', '--', `out/${t}.txt`).split('\n').filter(Boolean)).toHaveLength(1);
    // No gap in any task's status history: each change starts where the last ended.
    for (const task of await s.tasks.list({ projectId: project.id })) {
      const changes = (await s.events.list({ taskId: task.id, type: 'task.status', limit: 1000 })).events.map((e) => [e.payload.from, e.payload.to]);
      expect(changes[0]![0]).toBe('ready');
      for (let i = 1; i < changes.length; i++) expect(changes[i]![0]).toBe(changes[i - 1]![1]);
      expect(changes[changes.length - 1]![1]).toBe('done');
    }
    // Recovery adopted or resumed the runs in flight rather than starting them over:
    // each task has exactly one execute and one review run, and none failed or was abandoned.
    for (const task of await s.tasks.list({ projectId: project.id })) {
      const runs = await s.runs.list({ taskId: task.id });
      expect(runs.map((r) => [r.kind, r.status])).toEqual([['execute', 'succeeded'], ['review', 'succeeded']]);
    }
    // Nothing was ingested twice.
    const dup = await s.db.all(`SELECT dedupe_key FROM events WHERE dedupe_key IS NOT NULL GROUP BY dedupe_key HAVING COUNT(*) > 1`);
    expect(dup).toEqual([]);
  });
});

/** Runs crashDriver.ts; resolves with its output and how it ended. */
function runDriver(args: string[]): Promise<{ out: string; err: string; code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, [...scriptArgs(DRIVER), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const untrack = trackResource('process', `crash driver ${child.pid}`, () => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve) => child.once('close', (code, signal) => (untrack(), resolve({ out, err, code, signal }))));
}

/**
 * The points worth killing at: before each write inside a transaction (reads
 * change nothing, so a kill before one leaves the same state as a kill before
 * the next write) and before each COMMIT. Long loops (lease expiry of many
 * tasks) repeat the same few statements: the first eight of a transaction are
 * enough to cover one whole turn and the start of the next.
 */
function killPoints(recorded: string): string[] {
  const points = new Set(recorded.split('\n').filter((l) => l.includes('#')));
  return [...points].filter((p) => {
    const m = /#(\d+|commit)(?: (\w+))?/.exec(p);
    if (!m) return false;
    if (m[1] === 'commit') return true;
    return m[2] !== 'SELECT' && Number(m[1]) < 8;
  }).sort();
}

describe.each([
  { engine: 'SQLite', fresh: freshSqlite, skip: false },
  { engine: 'PostgreSQL', fresh: freshPostgres, skip: !pgAvailable() },
])('crash points: $engine', ({ fresh, skip }) => {
  let db: DBAdapter | null = null;
  /** The points' databases still open (a failed point leaves its own). */
  const open = new Set<DBAdapter>();
  afterEach(async () => {
    await db?.close();
    db = null;
    for (const d of open) await d.close();
    open.clear();
    removeTempDirs();
  });

  it.skipIf(skip)('a kill between any two statements of a claim or a transition leaves every task with a gap-free event log', { timeout: budget(1_800_000) }, async () => {
    // One run without a kill names every point the workload passes.
    const first = await fresh();
    db = first.db;
    const recorded = await runDriver([first.url, 'record']);
    expect(recorded.err).toBe('');
    expect(recorded.out).toMatch(/finished\n$/);
    expect(await eventLogProblems(createStore(first.db))).toEqual([]);
    await first.db.close();
    db = null;
    const points = killPoints(recorded.out);
    // The claim and every kind of status change are among them.
    for (const label of ['tasks.claimBest', 'tasks.advance', 'tasks.transition', 'tasks.retry', 'tasks.approve', 'tasks.reject', 'tasks.expireClaims', 'tasks.recordMerge', 'runs.start', 'runs.failWithTask', 'run.final']) {
      expect(points.some((p) => p.startsWith(`${label}#`)), label).toBe(true);
    }

    const failures: string[] = [];
    const killAndResume = async (point: string) => {
      const f = await fresh();
      open.add(f.db);
      const r = await runDriver([f.url, 'kill', point]);
      if (r.signal !== 'SIGKILL') failures.push(`${point}: the driver was not killed there (exit ${r.code}; ${r.out.trim().split('\n').pop()}${r.err ? `; ${r.err.slice(0, 500)}` : ''})`);
      const afterKill = await eventLogProblems(createStore(f.db));
      failures.push(...afterKill.map((p) => `${point}, after the kill: ${p}`));
      // And the work goes on from there to the end, the log still whole.
      const clock = await workloadClock(createStore(f.db));
      const store = createStore(f.db, clock.now, { handClock: true }); // leases by the workload's clock, on PostgreSQL too
      await runWorkload(store, clock);
      failures.push(...(await eventLogProblems(store)).map((p) => `${point}, after resuming: ${p}`));
      open.delete(f.db);
      await f.db.close();
    };
    // Two points at a time, each on a database of its own: a point spends much of its time waiting for a
    // driver to start or for the database to answer.
    const queue = [...points];
    await Promise.all([0, 1].map(async () => {
      for (let point = queue.shift(); point !== undefined; point = queue.shift()) await killAndResume(point);
    }));
    process.stderr.write(`crash points: killed at ${points.length} points\n`);
    expect(failures).toEqual([]);
  });
});
