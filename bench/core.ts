/**
 * bench:core — scheduling and claiming.
 *   1. rankU for a 10,000-task DAG (~3 deps each): the one-pass algorithm vs
 *      the naive per-task recursion of seed 002 §3.1 (a new cache per call).
 *   2. Claims per second with 1 and 4 processes on SQLite and on PostgreSQL
 *      (a throwaway cluster started here), counting double claims.
 * Prints figures and ratios; asserts nothing about time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { naiveRankU, rankAll, type RankInput } from '../src/core/scoring.js';
import type { Priority } from '../src/core/types.js';
import type { DBAdapter } from '../src/store/db.js';
import { openMigratedDatabase } from '../src/store/open.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { runClaimers } from '../test/stress/spawn.js';

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
  console.log(`one-pass rankAll   median ${fmt(a, 3)} ms (30 runs)   target < 5 ms`);
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
  });
}

async function benchClaims(label: string, makeUrl: () => Promise<string>, tasks: number): Promise<void> {
  console.log(`\n== claims on ${label}, ${tasks} tasks ==`);
  const rates: Record<number, number> = {};
  for (const procs of [1, 4]) {
    const url = await makeUrl();
    const db = await openMigratedDatabase(url);
    try {
      await seed(db, tasks);
      const results = await runClaimers(procs, (i) => ['claim', url, `owner-${i}`]);
      const won = results.flatMap((r) => r.won);
      const doubles = won.length - new Set(won).size;
      const lost = tasks - new Set(won).size;
      const wall = Math.max(...results.map((r) => r.ms));
      rates[procs] = won.length / (wall / 1000);
      const peak = Math.max(...results.map((r) => r.rssMb));
      console.log(
        `${procs} process(es): ${fmt(rates[procs]!, 0)} claims/s   (${won.length} claims in ${fmt(wall, 0)} ms, ${results.reduce((s, r) => s + r.attempts, 0)} claim transactions)   double claims: ${doubles}   lost: ${lost}   peak RSS per claimer: ${fmt(peak, 0)} MB`,
      );
    } finally {
      await db.close();
    }
  }
  console.log(`ratio 4 processes / 1 process: ${fmt(rates[4]! / rates[1]!)}×`);
}

benchRank();

const dir = mkdtempSync(join(tmpdir(), 'maestro-bench-'));
let n = 0;
try {
  await benchClaims('SQLite (WAL)', async () => `sqlite:${join(dir, `b${n++}.db`)}`, 4000);
  console.log('target: ≥ 2,000 claims/s with 4 processes, zero double claims');
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
        4000,
      );
      console.log('target: ≥ 1,000 claims/s with 4 processes, zero double claims');
    } finally {
      cluster.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\npeak RSS of the bench process: ${mb(process.resourceUsage().maxRSS * 1024)}`);
