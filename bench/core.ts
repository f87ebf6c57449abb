/**
 * bench:core — scheduling and claiming.
 *   1. rankU for a 10,000-task DAG (~3 deps each): the one-pass algorithm vs
 *      the naive per-task recursion of seed 002 §3.1 (a new cache per call).
 *   2. Claims per second with 1 and 4 processes on SQLite and on PostgreSQL
 *      (a throwaway cluster started here), counting double claims: each
 *      claimer takes ranked slices in transactions, as the scheduler does.
 *   3. One scheduler claim pass with 100,000 finished tasks and 1,000 ready
 *      ones, beside the same pass with 1,000 finished: the cost follows ready
 *      work, not history.
 * Prints the load average with the figures (the machine is shared).
 * Prints figures and ratios; asserts nothing about time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { indexDag, naiveRankU, rankAll, rankIndexed, type RankInput } from '../src/core/scoring.js';
import { rankCandidates, Scheduler } from '../src/daemon/scheduler.js';
import { createStore } from '../src/store/store.js';
import type { Priority } from '../src/core/types.js';
import type { DBAdapter } from '../src/store/db.js';
import { openMigratedDatabase } from '../src/store/open.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { runClaimers } from '../test/stress/spawn.js';
import { cpuOf } from './cpuPerTask.js';

const CLAIM_TASKS = 20_000;
/**
 * Claim transactions each claimer makes on tasks of its own before "go" (claimer.ts warmUp).
 * After 200 claims of ids that did not exist, a claimer spent a fifth of its CPU in the
 * measured claims compiling, and 4 claimers compiled 4 times over: 4,000-5,000 claims each
 * is not long enough to amortise that, and a running daemon has long paid it.
 */
const WARM_UP_PASSES = 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const fmt = (n: number, d = 2) => n.toFixed(d);

function makeDag(n: number, depsPer: number, seed = 42): RankInput[] {
  let s = seed;
  const rand = () => ((s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, (_, i) => {
    const deps = new Set<string>();
    for (let k = 0; k < depsPer && i > 0; k++) deps.add(`t${Math.floor(rand() * i)}`);
    return { id: `t${i}`, priority: Math.floor(rand() * 3) as Priority, deps: [...deps] };
  });
}

function benchRank(): void {
  const tasks = makeDag(10_000, 3);
  const edges = tasks.reduce((s, t) => s + t.deps.length, 0);
  console.log(`\n== rankU on a DAG of ${tasks.length} tasks, ${edges} edges ==`);
  const onePass: number[] = [];
  let ranks = new Map<string, number>();
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    ranks = rankAll(tasks);
    onePass.push(performance.now() - t0);
  }
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const dependents = new Map<string, string[]>();
  for (const t of tasks) for (const d of t.deps) (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(t.id);
  const naive: number[] = [];
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    for (const t of tasks) {
      const r = naiveRankU(t.id, byId, dependents, new Map());
      if (run === 0 && Math.abs(r - ranks.get(t.id)!) > 1e-6 * Math.abs(r)) throw new Error(`rank mismatch for ${t.id}`);
    }
    naive.push(performance.now() - t0);
  }
  const a = median(onePass);
  const b = median(naive);
  const index = new Map(tasks.map((t, i) => [t.id, i]));
  const dag = indexDag(tasks, index);
  const indexed: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    rankIndexed(dag.base, dag.depStart, dag.depIdx);
    indexed.push(performance.now() - t0);
  }
  console.log(`rankIndexed (typed arrays, one linear pass)   median ${fmt(median(indexed), 3)} ms (30 runs)   target ≤ 5 ms`);
  console.log(`one-pass rankAll (ids → indices → ranks by id)   median ${fmt(a, 3)} ms (30 runs)   target < 5 ms`);
  console.log(`naive per-task     median ${fmt(b, 1)} ms (3 runs)`);
  console.log(`ratio naive / one-pass: ${fmt(b / a, 0)}×   target ≥ 100×`);
  console.log(`peak RSS of this process so far: ${mb(process.resourceUsage().maxRSS * 1024)}`);
}

async function seed(db: DBAdapter, n: number): Promise<void> {
  const now = Date.now();
  await db.run(`INSERT INTO projects (id, name, repo_path, config, created_at, updated_at) VALUES ('p_bench', 'bench', '/r', '{}', $1, $1)`, [now]);
  await db.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      await tx.run(`INSERT INTO tasks (id, project_id, title, complexity, status, priority, created_at, updated_at) VALUES ($1, 'p_bench', 'x', 'easy', 'ready', 1, $2, $2)`, [`t_${i}`, now + i]);
    }
  });  // What autovacuum does within a minute of a table growing: without statistics PostgreSQL takes the
  // 20,000 ready rows for a handful and hashes them all for every claim (25 ms a claim) instead of
  // looking the slice up by primary key. Claims right after a bulk insert pay that until it runs.
  if (db.dialect === 'postgres') await db.run('ANALYZE tasks');
}

/**
 * `serverCpu`: CPU seconds the database server has used so far (PostgreSQL's, with its backends), for the cores the claims kept busy.
 * Three runs: 1 claimer, 4 claimers on one queue, and 4 claimers each on a database of its own with a
 * quarter of the tasks. The last shares nothing, so its ratio is what this machine gives 4 claimers at
 * all: the ceiling for the shared queue, measured in the same run.
 */
async function benchClaims(label: string, makeUrl: () => Promise<string>, tasks: number, serverCpu?: () => number): Promise<void> {
  console.log(`\n== claims on ${label}, ${tasks} tasks ==`);
  const runs = [
    { name: '1 process', procs: 1, own: false },
    { name: '4 processes', procs: 4, own: false },
    { name: '4 processes, a database each', procs: 4, own: true },
  ];
  const rates: number[] = [];
  let busyAlone = 0;
  for (const run of runs) {
    // One at a time: PostgreSQL refuses a CREATE DATABASE while another copies the template.
    const urls: string[] = [];
    const dbs: DBAdapter[] = [];
    for (let i = 0; i < (run.own ? run.procs : 1); i++) {
      urls.push(await makeUrl());
      dbs.push(await openMigratedDatabase(urls[i]!));
    }
    try {
      for (const db of dbs) await seed(db, tasks / dbs.length);
      // The server's CPU from "go": its backends were started and warmed up before, and
      // their CPU reaches the server's reaped-children figure whole when they exit.
      let server0 = 0;
      const results = await runClaimers(run.procs, (i) => ['claim', urls[run.own ? i : 0]!, `owner-${i}`, String(WARM_UP_PASSES)], () => (server0 = serverCpu?.() ?? 0));
      const server = (serverCpu?.() ?? 0) - server0;
      // Task ids repeat across databases: name each by its database too.
      const won = results.flatMap((r, i) => r.won.map((id) => (run.own ? `${i}/${id}` : id)));
      const doubles = won.length - new Set(won).size;
      const lost = tasks - new Set(won).size;
      const wall = Math.max(...results.map((r) => r.ms));
      const rate = won.length / (wall / 1000);
      rates.push(rate);
      const peak = Math.max(...results.map((r) => r.rssMb));
      const cpuUs = (results.reduce((s, r) => s + r.cpuMs, 0) / won.length) * 1000;
      const switches = results.reduce((s, r) => s + r.switches, 0) / won.length;
      console.log(
        `${run.name}: ${fmt(rate, 0)} claims/s   (${won.length} claims in ${fmt(wall, 0)} ms, ${results.reduce((s, r) => s + r.attempts, 0)} claim transactions, claimers' CPU ${fmt(cpuUs, 0)} µs and ${fmt(switches)} context switches per claim)   double claims: ${doubles}   lost: ${lost}   peak RSS per claimer: ${fmt(peak, 0)} MB   load ${fmt(loadavg()[0]!)}`,
      );
      if (serverCpu) {
        const claimers = results.reduce((s, r) => s + r.cpuMs, 0) / 1000;
        const busy = (claimers + server) / (wall / 1000);
        if (run.procs === 1) busyAlone = busy;
        console.log(`  cores busy on average: claimers ${fmt(claimers / (wall / 1000), 2)} + server ${fmt(server / (wall / 1000), 2)} = ${fmt(busy, 2)} of ${availableParallelism()}; server CPU ${fmt((server / won.length) * 1e6, 0)} µs per claim`);
      }
    } finally {
      for (const db of dbs) await db.close();
    }
  }
  console.log(`ratio 4 processes / 1 process: ${fmt(rates[1]! / rates[0]!)}×   (a database each, sharing nothing: ${fmt(rates[2]! / rates[0]!)}×, the ceiling on this machine)`);
  // One claimer and its server backend already keep `busyAlone` cores busy: more claimers can add at
  // most what is left of the machine, and only if a claim cost no more CPU with company than alone.
  if (busyAlone) console.log(`the most these cores allow: ${availableParallelism()} / ${fmt(busyAlone, 2)} busy with one claimer = ${fmt(availableParallelism() / busyAlone)}× at the same CPU per claim`);
}

async function seedHistory(db: DBAdapter, finished: number, ready: number): Promise<void> {
  const now = Date.now();
  await db.run(`INSERT INTO projects (id, name, repo_path, config, created_at, updated_at) VALUES ('p_bench', 'bench', '/r', '{}', $1, $1)`, [now]);
  await db.transaction(async (tx) => {
    for (let i = 0; i < finished; i++) {
      await tx.run(`INSERT INTO tasks (id, project_id, title, complexity, status, priority, created_at, updated_at) VALUES ($1, 'p_bench', 'x', 'easy', 'done', 1, $2, $2)`, [`d_${i}`, now - finished + i]);
    }
    // Each ready task depends on a finished one (read once, as a dependency).
    for (let i = 0; i < ready; i++) {
      await tx.run(`INSERT INTO tasks (id, project_id, title, complexity, status, priority, deps, created_at, updated_at) VALUES ($1, 'p_bench', 'x', 'easy', 'ready', $2, $3, $4, $4)`, [
        `r_${i}`, i % 3, JSON.stringify([`d_${(i * 7919) % finished}`]), now + i,
      ]);
    }
  });
}

async function benchClaimPass(dir: string): Promise<void> {
  console.log('\n== one scheduler claim pass (8 slots), SQLite, 1,000 ready tasks ==');
  const medians: Record<number, number> = {};
  for (const finished of [1_000, 100_000]) {
    const db = await openMigratedDatabase(`sqlite:${join(dir, `history-${finished}.db`)}`);
    try {
      await seedHistory(db, finished, 1_000);
      const store = createStore(db);
      const scheduler = new Scheduler(store, { owner: 'bench', leaseMs: 10 * 60_000 });
      let t0 = performance.now();
      await scheduler.claim(8, () => 8);
      const first = performance.now() - t0;
      const passes: number[] = [];
      for (let i = 0; i < 30; i++) {
        t0 = performance.now();
        await scheduler.claim(8, () => 8);
        passes.push(performance.now() - t0);
      }
      medians[finished] = median(passes);
      // What every tick cost before: list every task and rank them all.
      t0 = performance.now();
      rankCandidates(await store.tasks.list({ limit: 100_000 }), Date.now());
      const full = performance.now() - t0;
      console.log(
        `${finished.toLocaleString('en')} finished: pass median ${fmt(medians[finished]!)} ms (30 passes; the first, which builds the ranking, ${fmt(first)} ms)   target ≤ 10 ms   [list-and-rank-everything, as before: ${fmt(full)} ms]`,
      );
    } finally {
      await db.close();
    }
  }
  console.log(`ratio 100,000 finished / 1,000 finished: ${fmt(medians[100_000]! / medians[1_000]!)}× (1× = independent of history)`);
}

console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(', ')} (${process.env.BENCH_NOTE ?? '2 cores, shared with other work'})`);
benchRank();

const dir = mkdtempSync(join(tmpdir(), 'maestro-bench-'));
let n = 0;
try {
  await benchClaimPass(dir);
  // 20,000 claims, each claimer connected and warmed up before "go" (claimer.ts): with 4,000 and cold
  // claimers, four finished in half a second, much of it each process's first connection and its JIT
  // warming up, which is not what a claim costs a running daemon.
  await benchClaims('SQLite (WAL)', async () => `sqlite:${join(dir, `b${n++}.db`)}`, CLAIM_TASKS);
  console.log('target: unchanged or better than before (8,100/s with 1 process, 8,413/s with 4 on main, load 1–2), zero double claims');
  const cluster = await startPostgres();
  if (!cluster) console.log('\nPostgreSQL not installed here: PostgreSQL claims not measured.');
  else {
    try {
      const pg = await import('pg');
      await benchClaims(
        'PostgreSQL',
        async () => {
          const name = `bench_${n++}`;
          const c = new pg.default.Client({ connectionString: cluster.url });
          await c.connect();
          await c.query(`CREATE DATABASE ${name}`);
          await c.end();
          return cluster.url.replace(/\/postgres$/, `/${name}`);
        },
        CLAIM_TASKS,
        () => {
          const c = cpuOf(cluster.serverPid());
          return c.self + c.children;
        },
      );
      console.log('target: ≥ 5,000 claims/s with 4 processes and ≥ 1.5× one process, zero double claims');
    } finally {
      cluster.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\npeak RSS of the bench process: ${mb(process.resourceUsage().maxRSS * 1024)}`);
console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(', ')}`);
