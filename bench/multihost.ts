/**
 * bench:multihost — tasks per minute with 1 vs 3 daemons sharing one
 * PostgreSQL and one bare git remote, when the scripted agent takes 1 s per
 * run. Each daemon runs at most 2 runs at once (as a small host would), so the
 * ratio shows how work spreads over daemons. Timed from the tasks' creation,
 * once every daemon has started. BENCH_ROUNDS (3) rounds of both, medians
 * compared. Prints figures and the ratios. BENCH_TRACE=<folder> writes each round's event log there
 * (d<daemons>-r<round>.json), for a timeline of where the time went. BENCH_STATEMENTS=1 prints
 * each round's most frequent SQL statements per task (pg_stat_statements), for where the queries go.
 * BENCH_WORKER_NICE sets the daemons' workerNice (0: runs at the daemons' own priority).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULTS } from '../src/config/defaults.js';
import { openMigratedDatabase } from '../src/store/open.js';
import { createStore } from '../src/store/store.js';
import { buildForTests } from '../test/helpers/build.js';
import { removeTempDirs } from '../test/helpers/db.js';
import { startPostgres, type PgCluster } from '../test/helpers/postgres.js';
import { sharedRemote } from '../test/helpers/repo.js';
import { benchDaemonNodeArgs, benchTick, cpuOf, machineCpu } from './cpuPerTask.js';

const TASKS = Number(process.env.TASKS ?? 18);
// Node options for every daemon (benchDaemonNodeArgs); with them, daemons are stopped with SIGTERM (a profile is
// written at a clean exit), not killed.
const NODE_ARGS = benchDaemonNodeArgs();
// BENCH_WORKER_NICE=<0-19>: the daemons' workerNice (default the daemon's, 10), to compare runs at the daemon's priority.
const WORKER_NICE = process.env.BENCH_WORKER_NICE ? { workerNice: Number(process.env.BENCH_WORKER_NICE) } : {};

/** CPU seconds of the daemons, of their workers and git, and of the PostgreSQL server (with its backends). */
function cpuNow(procs: ChildProcess[], cluster: PgCluster): { daemons: number; children: number; postgres: number } {
  const postmaster = cpuOf(cluster.serverPid());
  const out = { daemons: 0, children: 0, postgres: postmaster.self + postmaster.children };
  for (const p of procs) {
    const c = cpuOf(p.pid!);
    out.daemons += c.self;
    out.children += c.children;
  }
  return out;
}

/** Mean milliseconds per run in each stage (run.phase start → done), by run kind, and from run.started to the worker's first record. */
async function stageTimes(store: ReturnType<typeof createStore>): Promise<Map<string, number>> {
  const rows = await store.db.all<{ run_id: string; type: string; payload: string; at: number }>(`SELECT run_id, type, payload, at FROM events WHERE type IN ('run.started', 'run.phase') ORDER BY id`);
  const open = new Map<string, number>();
  const kinds = new Map<string, string>();
  const sums = new Map<string, { ms: number; n: number }>();
  const add = (key: string, ms: number) => {
    const s = sums.get(key) ?? { ms: 0, n: 0 };
    sums.set(key, { ms: s.ms + ms, n: s.n + 1 });
  };
  for (const r of rows) {
    const p = JSON.parse(r.payload) as { kind?: string; stage?: string; state?: string };
    if (r.type === 'run.started') {
      kinds.set(r.run_id, p.kind ?? '?');
      open.set(`${r.run_id}:spawn`, r.at);
      continue;
    }
    const kind = kinds.get(r.run_id) ?? '?';
    if (p.stage === 'run' && p.state === 'start' && open.has(`${r.run_id}:spawn`)) add(`${kind} start`, r.at - open.get(`${r.run_id}:spawn`)!);
    if (p.state === 'start') open.set(`${r.run_id}:${p.stage}`, r.at);
    if (p.state === 'done' && p.stage !== 'run' && open.has(`${r.run_id}:${p.stage}`)) add(`${kind} ${p.stage}`, r.at - open.get(`${r.run_id}:${p.stage}`)!);
  }
  return new Map([...sums].map(([k, s]) => [k, s.ms / s.n]));
}

/**
 * Git's own work in a run, outside any lease or queue: the execute run's worktree and diff-gate steps (ms per run).
 * How much slower it gets with three daemons is what the CPU alone does to git on this machine; merging is git
 * work too (fetch, merge, push), so its ratio cannot fall below this one's.
 */
const gitStepsMs = (stages: Map<string, number>) => (stages.get('execute worktree') ?? 0) + (stages.get('execute diff-gate') ?? 0);

/**
 * Mean ms from a task's move to executing to its execute run's start (the clone's sync, the brief), and from
 * there to the worker's first record (the worker's start): for the first wave (the first 2 claims per daemon,
 * all starting at once) and for the tasks after it.
 */
async function firstWave(store: ReturnType<typeof createStore>, daemons: number): Promise<string> {
  const rows = await store.db.all<{ task_id: string; run_id: string | null; type: string; payload: string; at: number }>(
    `SELECT task_id, run_id, type, payload, at FROM events WHERE type IN ('task.status', 'run.started', 'run.phase') ORDER BY id`,
  );
  const tasks = new Map<string, { claimed: number; executing?: number; started?: number; worker?: number; run?: string }>();
  for (const r of rows) {
    const p = JSON.parse(r.payload) as { to?: string; kind?: string };
    const t = tasks.get(r.task_id);
    if (r.type === 'task.status' && p.to === 'queued' && !t) tasks.set(r.task_id, { claimed: r.at });
    else if (!t) continue;
    else if (r.type === 'task.status' && p.to === 'executing') t.executing ??= r.at;
    else if (r.type === 'run.started' && p.kind === 'execute' && !t.run) Object.assign(t, { run: r.run_id, started: r.at });
    else if (r.type === 'run.phase' && r.run_id === t.run) t.worker ??= r.at;
  }
  const ordered = [...tasks.values()].sort((a, b) => a.claimed - b.claimed);
  const mean = (ts: typeof ordered, f: (t: (typeof ordered)[number]) => number) => Math.round(ts.reduce((sum, t) => sum + f(t), 0) / Math.max(1, ts.length));
  const wave = (ts: typeof ordered) => `run start ${mean(ts, (t) => t.started! - t.executing!)}, worker start ${mean(ts, (t) => t.worker! - t.started!)}`;
  const first = ordered.slice(0, 2 * daemons).filter((t) => t.worker);
  const rest = ordered.slice(2 * daemons).filter((t) => t.worker);
  return `first wave: ${wave(first)}; after it: ${wave(rest)}`;
}

/** The statements run in the round's database since the reset, most frequent first, per task. */
async function printStatements(store: ReturnType<typeof createStore>, dbName: string, daemons: number): Promise<void> {
  const rows = await store.db.all<{ query: string; calls: number; ms: number }>(
    `SELECT s.query, s.calls, s.total_exec_time AS ms FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY s.calls DESC`,
    [dbName],
  );
  const calls = rows.reduce((n, r) => n + Number(r.calls), 0);
  console.log(`  ${daemons} daemon(s): ${(calls / TASKS).toFixed(0)} statements per task (this bench's own polling included); the most frequent:`);
  for (const r of rows.slice(0, Number(process.env.BENCH_STATEMENTS_TOP ?? 15))) {
    console.log(`    ${(Number(r.calls) / TASKS).toFixed(1).padStart(6)}  ${(Number(r.ms) / Number(r.calls)).toFixed(3)} ms  ${r.query.replace(/\s+/g, " ").slice(0, 220)}`);
  }
}

async function run(main: string, cluster: PgCluster, daemons: number, round: number): Promise<{ ms: number; merging: number; cpu: number; git: number }> {
  const dbName = `mh_${round}_${daemons}`;
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = cluster.url.replace(/\/postgres$/, `/${dbName}`);
  const root = mkdtempSync(join(tmpdir(), 'maestro-bench-mh-'));
  const procs: ChildProcess[] = [];
  const store = createStore(await openMigratedDatabase(url));
  try {
    // The same shared remote the multihost suite runs on.
    const remote = sharedRemote(root);
    const titles = Array.from({ length: TASKS }, (_, i) => `job-${String(i).padStart(3, "0")}`); // padded: "job-1" would also match "job-10"
    const script = join(root, 'script.yaml');
    writeFileSync(
      script,
      `steps:\n${titles.map((t) => `  - match: { role: execute, title: "${t}" }\n    actions:\n      - wait: 1000\n      - write: { path: "out/${t}.txt", content: "${t}\\n" }\n`).join('')}  - match: { role: review }\n    actions:\n      - wait: 1000\n      - verdict: { verdict: approve, findings: [] }\n`,
    );
    const project = await store.projects.create({ name: 'bench', repoPath: remote, config: { remote, provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const names = Array.from({ length: daemons }, (_, i) => `b${i}`);
    for (const [i, name] of names.entries()) {
      const home = join(root, `home-${i}`);
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, 'config.json'), JSON.stringify({ name, database: url, ...benchTick(), leaseMs: 10_000, maxConcurrentRuns: 2, maxConcurrentRunsPerProject: 2, reservedConflictSlots: 0, logLevel: 'warn', ...WORKER_NICE }));
      procs.push(spawn(process.execPath, [...NODE_ARGS, main, 'serve', '--home', home, '--port', '0', '--no-demo'], { stdio: 'ignore' }));
    }
    // The tasks are created once every daemon has registered (it does so once it listens): the daemons' start is not timed.
    for (;;) {
      const [row] = await store.db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM daemons WHERE name IN (${names.map((n) => `'${n}'`).join(', ')})`);
      if (Number(row?.n) === daemons) break;
      const dead = procs.find((p) => p.exitCode !== null);
      if (dead) throw new Error(`a daemon exited with ${dead.exitCode} before it registered`);
      await new Promise((r) => setTimeout(r, 50));
    }
    if (STATEMENTS) await store.db.run('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').then(() => store.db.run('SELECT pg_stat_statements_reset()'));
    const cpu0 = cpuNow(procs, cluster);
    const machine0 = machineCpu();
    const t0 = performance.now();
    for (const t of titles) await store.tasks.create({ projectId: project.id, title: t, complexity: 'easy', ownedFiles: [`out/${t}.txt`] });
    for (;;) {
      const rows = await store.db.all<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM tasks GROUP BY status`);
      const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
      if (by.needs_attention) {
        const [t] = await store.tasks.list({ status: 'needs_attention', limit: 1 });
        throw new Error(`${by.needs_attention} task(s) need attention, e.g. ${t?.title}: ${t?.lastRunError}`);
      }
      if (by.done === TASKS) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const elapsed = performance.now() - t0;
    if (process.env.BENCH_TRACE) writeFileSync(join(process.env.BENCH_TRACE, `d${daemons}-r${round}.json`), JSON.stringify({ t0: Date.now() - elapsed, events: await store.db.all(`SELECT * FROM events ORDER BY id`) }));
    const cpu1 = cpuNow(procs, cluster);
    if (STATEMENTS) await printStatements(store, dbName, daemons);
    const machine = machineCpu() - machine0;
    const parts = { daemons: cpu1.daemons - cpu0.daemons, children: cpu1.children - cpu0.children, postgres: cpu1.postgres - cpu0.postgres };
    const cpu = parts.daemons + parts.children + parts.postgres;
    // Where the time went: mean seconds a task spent in each status (from the event log).
    const rows = await store.db.all<{ task_id: string; payload: string; at: number }>(`SELECT task_id, payload, at FROM events WHERE type = 'task.status' ORDER BY id`);
    const since = new Map<string, { status: string; at: number }>();
    const total = new Map<string, number>();
    for (const r of rows) {
      const p = JSON.parse(r.payload) as { from: string; to: string };
      const prev = since.get(r.task_id);
      if (prev) total.set(prev.status, (total.get(prev.status) ?? 0) + (r.at - prev.at));
      since.set(r.task_id, { status: p.to, at: r.at });
    }
    console.log(`  ${daemons} daemon(s), mean s per task in: ${[...total].map(([k, v]) => `${k} ${(v / TASKS / 1000).toFixed(2)}`).join(', ')}`);
    const stages = await stageTimes(store);
    console.log(`  ${daemons} daemon(s), mean ms per run in: ${[...stages].map(([k, ms]) => `${k} ${Math.round(ms)}`).join(', ')}`);
    console.log(`  ${daemons} daemon(s), mean ms from executing to: ${await firstWave(store, daemons)}`);
    const perTask = (x: number) => (x / TASKS).toFixed(3);
    console.log(`  ${daemons} daemon(s): CPU ${perTask(cpu)} s per task (daemons ${perTask(parts.daemons)}, workers and git ${perTask(parts.children)}, PostgreSQL ${perTask(parts.postgres)}), ${(cpu / (elapsed / 1000)).toFixed(2)} cores busy on average; the machine ${perTask(machine)} s per task, ${(machine / (elapsed / 1000)).toFixed(2)} cores busy (this bench's own process included)`);
    return { ms: elapsed, merging: (total.get('merging') ?? 0) / TASKS / 1000, cpu, git: gitStepsMs(stages) };
  } finally {
    await Promise.all(procs.map((p) => new Promise<void>((resolve) => (p.exitCode !== null ? resolve() : (p.once('exit', () => resolve()), p.kill(NODE_ARGS.length ? 'SIGTERM' : 'SIGKILL'))))));
    await store.close();
    // Workers (and git clean-ups) of the killed daemons may still be finishing a write; retry the cleanup for up to 10 s.
    rmSync(root, { recursive: true, force: true, maxRetries: 50, retryDelay: 200 });
  }
}

const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
const cluster = await startPostgres(STATEMENTS ? { settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.max=1000'] } : {});
if (!cluster) {
  console.log('PostgreSQL is not installed here (initdb / pg_ctl): nothing to measure.');
  process.exit(0);
}
// Daemons and workers from compiled JavaScript, as installed (`npm run build`), not through tsx.
const build = buildForTests();
try {
  console.log(`== ${TASKS} tasks, scripted agent 1 s per run (execute, then review), 2 runs at a time per daemon, workers at nice ${WORKER_NICE.workerNice ?? DEFAULTS.workerNice} ==`);
  // Rounds of both, the order alternating (a machine that gets busier favours neither); medians compared.
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const trials: Record<1 | 3, Array<Awaited<ReturnType<typeof run>>>> = { 1: [], 3: [] };
  for (let r = 0; r < rounds; r++) {
    for (const daemons of r % 2 ? ([3, 1] as const) : ([1, 3] as const)) trials[daemons].push(await run(build.main, cluster, daemons, r + 1));
    const [a, b] = [trials[1][r]!, trials[3][r]!];
    console.log(`round ${r + 1}: 3 / 1 daemons ${(a.ms / b.ms).toFixed(2)}×, merging ${(b.merging / a.merging).toFixed(2)}×`);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const pick = (ts: Array<Awaited<ReturnType<typeof run>>>) => ({ ms: median(ts.map((t) => t.ms)), merging: median(ts.map((t) => t.merging)), cpu: median(ts.map((t) => t.cpu)), git: median(ts.map((t) => t.git)) });
  const one = pick(trials[1]);
  const three = pick(trials[3]);
  console.log(`medians of ${rounds} rounds:`);
  const tpm = (ms: number) => (TASKS / ms) * 60_000;
  console.log(`1 daemon:  ${(one.ms / 1000).toFixed(1)} s  = ${tpm(one.ms).toFixed(1)} tasks/min`);
  console.log(`3 daemons: ${(three.ms / 1000).toFixed(1)} s  = ${tpm(three.ms).toFixed(1)} tasks/min`);
  console.log(`ratio 3 / 1 daemons: ${(one.ms / three.ms).toFixed(2)}×   target ≥ 2.5×`);
  // However well three daemons share the work, its CPU seconds need this long on this machine's cores.
  const cores = availableParallelism();
  console.log(`the CPU allows at most ${(one.ms / 1000 / (three.cpu / cores)).toFixed(2)}× on ${cores} cores (1 daemon's time against 3 daemons' CPU seconds spread over every core)`);
  console.log(`s per task in merging, 3 / 1 daemons: ${three.merging.toFixed(2)} / ${one.merging.toFixed(2)} = ${(three.merging / one.merging).toFixed(2)}×   target ≤ 1.5×`);
  console.log(`git's own steps in a run (execute worktree + diff-gate, no lease, no queue), ms, 3 / 1 daemons: ${three.git.toFixed(0)} / ${one.git.toFixed(0)} = ${(three.git / one.git).toFixed(2)}×: what the busy CPU alone does to git here; merging (fetch, merge, push) is git work too`);
  console.log('(timed from the tasks\' creation, once every daemon listens; daemons and workers run compiled JavaScript)');
} finally {
  build.remove();
  cluster.stop();
  removeTempDirs(); // the seed repositories sharedRemote made
}
