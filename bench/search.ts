/**
 * `npm run bench:search` — the knowledge search benchmark.
 *
 * 1. Generated corpora of 1k, 10k and 100k entries (BENCH_SIZES=1000,10000 to
 *    change): index build time, index size, process memory, and p50/p95 query
 *    latency of the whole pipeline (filters in SQL, BM25F, decay, proximity,
 *    dedup, family cap, MMR, exploration, exposure bump) in a warm process,
 *    beside MiniSearch on the same documents and queries.
 * 2. Ranking quality on Cranfield (nDCG@10, recall@10) beside plain BM25,
 *    SQLite FTS5 + porter and MiniSearch over the same 1,400 documents and 225
 *    queries, and five repeats of every query checked identical.
 * 3. What `secure_delete` (store.ts: a deleted row's bytes are zeroed, since agents read the index file) costs on
 *    10,000 entries: a sync after a tenth of the files changed, and a rebuild, beside the same with it off.
 * 4. Cold `maestro search` on 10,000 entries: a fresh process per call, with
 *    the home's daemon running (knowledge routes served in this process, found
 *    by the CLI through the home's lock) and without one (in process); wall
 *    clock p50/p95 and CPU time per call (user + system, less sensitive to the
 *    machine's load), beside bare `node -e 0`.
 *
 * Figures, not assertions: each figure is printed with its target beside it
 * and a ratio against a baseline measured in the same run (MiniSearch, plain
 * BM25, bare `node`). The machine's load average is printed at the start and
 * the end: on a shared machine the wall-clock figures move with it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import MiniSearch from 'minisearch';
import { knowledgeRoutes } from '../src/api/routes/knowledge.js';
import { createKnowledgePool } from '../src/knowledge/pool.js';
import { openKnowledge } from '../src/knowledge/knowledge.js';
import { INDEX_FILE, openIndex, rebuildIndex, syncIndex } from '../src/knowledge/index/store.js';
import { builtinSources } from '../src/knowledge/format/corpus.js';
import { resolveWorkflowRoot } from '../src/knowledge/format/root.js';
import { generateCorpus, generateQueries, writeCorpus, type GenDoc } from './corpus.js';
import { fts5Porter, loadDocs, loadQrels, loadQueries, plainBm25, score } from './cranfield.js';

const MB = 1024 * 1024;
// BENCH_SIZES=none, BENCH_SKIP_CRANFIELD=1, BENCH_SKIP_CLI=1: run a part alone.
const sizes = process.env.BENCH_SIZES === 'none' ? [] : (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const QUERIES = 300;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const f = (x: number, d = 2) => x.toFixed(d);
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

function time<T>(fn: () => T): [T, number] {
  const t = performance.now();
  const r = fn();
  return [r, performance.now() - t];
}

function miniIndex(docs: Array<{ id: string; title: string; summary: string; tags: string; body: string }>) {
  const ms = new MiniSearch({ fields: ['title', 'summary', 'tags', 'body'], storeFields: [], searchOptions: { boost: { title: 5, summary: 1.5, tags: 3, body: 0.5 } } });
  ms.addAll(docs);
  return ms;
}

const summary: string[] = [];

function benchSize(size: number): void {
  const docs = generateCorpus(size);
  const queries = generateQueries(docs, QUERIES);
  const dir = mkdtempSync(join(tmpdir(), `bench-search-${size}-`));
  try {
    const [, writeMs] = time(() => writeCorpus(dir, docs));
    const rssBefore = process.memoryUsage().rss;
    // A warm process (the daemon): file scans throttled, as createKnowledgePool does.
    const [k, buildMs] = time(() => {
      const opened = openKnowledge({ env: process.env, workflowRoot: dir, syncIntervalMs: 3_600_000 });
      opened.sync(); // the whole build: read, parse and index every file
      return opened;
    });
    const rssAfter = process.memoryUsage().rss;
    const heapAfter = process.memoryUsage().heapUsed;
    const dbBytes = statSync(join(dir, '.workflow', INDEX_FILE)).size + (existsSync(join(dir, '.workflow', `${INDEX_FILE}-wal`)) ? statSync(join(dir, '.workflow', `${INDEX_FILE}-wal`)).size : 0);
    const broad = generateQueries(docs, QUERIES, 11, 'broad');
    const measure = (qs: string[], o: Parameters<typeof k.search>[1]) => {
      for (const q of qs.slice(0, 30)) k.search(q, { ...o, readOnlyProbe: true });
      return qs.map((q) => time(() => k.search(q, o))[1]);
    };
    const full = measure(queries, { limit: 10 });
    const probe = measure(queries, { limit: 10, readOnlyProbe: true });
    const filtered = measure(queries, { limit: 10, category: 'arch', readOnlyProbe: true });
    const fullBroad = measure(broad, { limit: 10 });
    k.close();

    const flat = docs.filter((d: GenDoc) => !d.deprecated).map((d) => ({ id: d.id, title: d.title, summary: d.summary, tags: `${d.tags.join(' ')} ${d.category}`, body: d.body }));
    const [ms, msBuild] = time(() => miniIndex(flat));
    const miniMeasure = (qs: string[]) => {
      for (const q of qs.slice(0, 30)) ms.search(q);
      return qs.map((q) => time(() => ms.search(q).slice(0, 10))[1]);
    };
    const mini = miniMeasure(queries);
    const miniBroad = miniMeasure(broad);

    const p95 = pct(full, 95);
    const ratio = pct(mini, 95) / p95;
    const ratioBroad = pct(miniBroad, 95) / pct(fullBroad, 95);
    const rssGrowth = (rssAfter - rssBefore) / MB;
    const t10k = size === 10_000;
    const t100k = size === 100_000;
    process.stdout.write(
      `\n## ${size.toLocaleString('en')} entries   (load average ${load()})\n` +
        `  files written            ${f(writeMs / 1000)} s (setup, not measured below)\n` +
        `  index build (maestro)    ${f(buildMs / 1000)} s${t10k ? ' (target < 2 s)' : ''}   MiniSearch build ${f(msBuild / 1000)} s   ratio MiniSearch/maestro ${f(msBuild / buildMs)}×\n` +
        `  index on disk            ${f(dbBytes / MB, 1)} MB${t100k ? ' (target < 300 MB)' : ''}   (${f(dbBytes / size / 1024, 2)} KB per entry)\n` +
        `  memory while indexing    RSS growth ${f(rssGrowth, 1)} MB${t100k ? ' (target < 300 MB)' : ''}, RSS now ${f(process.memoryUsage().rss / MB, 0)} MB (JS heap ${f(heapAfter / MB, 0)} MB, holding the generated corpus too)\n` +
        `  narrow queries (content words, ${QUERIES})\n` +
        `    maestro, full pipeline p50 ${f(pct(full, 50))} ms  p95 ${f(p95)} ms${t10k ? ' (target < 5 ms)' : ''}   (exposure bumped)\n` +
        `    maestro, read-only     p50 ${f(pct(probe, 50))} ms  p95 ${f(pct(probe, 95))} ms\n` +
        `    maestro, --category    p50 ${f(pct(filtered, 50))} ms  p95 ${f(pct(filtered, 95))} ms\n` +
        `    MiniSearch             p50 ${f(pct(mini, 50))} ms  p95 ${f(pct(mini, 95))} ms\n` +
        `    ratio MiniSearch/maestro (p95) ${f(ratio)}×${t10k ? ' (target ≥ 3×)' : ''}\n` +
        `  broad queries (frequent words included, ${QUERIES})\n` +
        `    maestro, full pipeline p50 ${f(pct(fullBroad, 50))} ms  p95 ${f(pct(fullBroad, 95))} ms\n` +
        `    MiniSearch             p50 ${f(pct(miniBroad, 50))} ms  p95 ${f(pct(miniBroad, 95))} ms\n` +
        `    ratio MiniSearch/maestro (p95) ${f(ratioBroad)}×${t10k ? ' (target ≥ 3×)' : ''}\n`,
    );
    if (t10k) {
      summary.push(`p95 on 10k, whole pipeline: ${f(p95)} ms (target < 5 ms) — ${verdict(p95 < 5)}; broad queries ${f(pct(fullBroad, 95))} ms`);
      summary.push(`speed vs MiniSearch at 10k (p95): narrow queries ${f(ratio)}×, broad queries ${f(ratioBroad)}× (target ≥ 3×) — ${ratio >= 3 && ratioBroad >= 3 ? 'met' : ratio >= 3 || ratioBroad >= 3 ? `met for ${ratio >= 3 ? 'narrow' : 'broad'} queries only` : 'NOT met'}`);
      summary.push(`10k entries indexed in ${f(buildMs / 1000)} s (target < 2 s) — ${verdict(buildMs < 2000)}; MiniSearch ${f(msBuild / 1000)} s`);
    }
    if (t100k) {
      summary.push(`100k entries, index on disk: ${f(dbBytes / MB, 0)} MB (target < 300 MB) — ${verdict(dbBytes / MB < 300)}`);
      summary.push(`100k entries, memory: RSS growth while indexing ${f(rssGrowth, 0)} MB (target < 300 MB) — ${verdict(rssGrowth < 300)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The index's upkeep with `secure_delete` on (as store.ts opens it) and off (the baseline), on one corpus: a sync
 * after a tenth of the files changed (their rows deleted and written again), and a full rebuild. Median of 3 each.
 */
function benchSecureDelete(size: number): void {
  const docs = generateCorpus(size);
  const dir = mkdtempSync(join(tmpdir(), `bench-secure-delete-${size}-`));
  try {
    writeCorpus(dir, docs);
    const sources = builtinSources(resolveWorkflowRoot({ env: process.env, workflowRoot: dir }));
    const files = sources.flatMap((s) => s.listFiles().map((x) => x.path));
    const changed = files.filter((_, i) => i % 10 === 0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const figures = (on: boolean) => {
      const sync: number[] = [];
      const rebuild: number[] = [];
      for (let round = 0; round < 3; round++) {
        rmSync(join(dir, '.workflow', INDEX_FILE), { force: true });
        for (const ext of ['-wal', '-shm']) rmSync(join(dir, '.workflow', INDEX_FILE + ext), { force: true });
        const handle = openIndex({ workflowDir: join(dir, '.workflow'), sources });
        try {
          handle.db.pragma(`secure_delete = ${on ? 'ON' : 'OFF'}`);
          syncIndex(handle, sources);
          for (const file of changed) writeFileSync(file, readFileSync(file, 'utf8') + `\n<!-- round ${round} -->\n`);
          sync.push(time(() => syncIndex(handle, sources))[1]);
          rebuild.push(time(() => rebuildIndex(handle, sources))[1]);
        } finally {
          handle.close();
        }
      }
      return { sync: median(sync), rebuild: median(rebuild) };
    };
    const off = figures(false);
    const on = figures(true);
    process.stdout.write(
      `\n## secure_delete, ${size.toLocaleString('en')} entries   (load average ${load()})\n` +
        `  sync, ${changed.length} of ${files.length} files changed   on ${f(on.sync)} ms   off ${f(off.sync)} ms   ratio on/off ${f(on.sync / off.sync)}×\n` +
        `  rebuild                          on ${f(on.rebuild)} ms   off ${f(off.rebuild)} ms   ratio on/off ${f(on.rebuild / off.rebuild)}×\n`,
    );
    summary.push(`secure_delete at ${size.toLocaleString('en')} entries: a sync after a tenth of the files changed ${f(on.sync / off.sync)}× the time with it off, a rebuild ${f(on.rebuild / off.rebuild)}× (no target)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function benchCranfield(): string {
  const docs = loadDocs();
  const queries = loadQueries();
  const qrels = loadQrels();
  const dir = mkdtempSync(join(tmpdir(), 'bench-cranfield-'));
  mkdirSync(join(dir, '.workflow', 'knowhow'), { recursive: true });
  for (const d of docs) writeFileSync(join(dir, '.workflow', 'knowhow', `DOC-19680101-cran-${d.id}.md`), `---\ntitle: ${JSON.stringify(d.title || `document ${d.id}`)}\ntype: document\n---\n\n${d.text}\n`);
  const docId = (id: string) => Number(id.split('-').pop());
  const rows: string[] = [];
  const bm = plainBm25(docs);
  let base: { ndcg10: number; msPerQuery: number } | undefined;
  const run = (name: string, fn: (q: string) => number[]) => {
    const ranked = new Map<number, number[]>();
    const [, ms] = time(() => queries.forEach((q, i) => ranked.set(i + 1, fn(q))));
    const s = score(ranked, qrels, queries.length);
    const perQuery = ms / queries.length;
    const vs = base ? `   vs plain BM25: nDCG ${f(s.ndcg10 / base.ndcg10)}×, speed ${f(base.msPerQuery / perQuery)}×` : '';
    rows.push(`  ${name.padEnd(44)} nDCG@10 ${f(s.ndcg10, 4)}  recall@10 ${f(s.recall10, 4)}  ${f(perQuery)} ms/query${vs}`);
    base ??= { ndcg10: s.ndcg10, msPerQuery: perQuery };
    return s;
  };
  run('plain BM25 (k1 1.2, b 0.75, no stemming)', (q) => bm(q, 10));
  const fts = fts5Porter(docs, Database);
  const porter = run('SQLite FTS5 + porter (bm25, words OR-ed)', (q) => fts.search(q, 10));
  fts.close();
  const ms = miniIndex(docs.map((d) => ({ id: String(d.id), title: d.title, summary: '', tags: '', body: d.text })));
  run('MiniSearch (same field boosts)', (q) => ms.search(q).slice(0, 10).map((r) => Number(r.id)));
  const k = openKnowledge({ env: process.env, workflowRoot: dir, syncIntervalMs: 3_600_000 });
  k.sync();
  const off = run('maestro, diversity off', (q) => k.search(q, { limit: 10, diversity: 'off', readOnlyProbe: true }).results.map((r) => docId(r.id)));
  // The whole pipeline as `maestro search` runs it: balanced, exploration slot on, exposure bumped.
  const pages = () => queries.map((q) => k.search(q, { limit: 10 }).results.map((r) => `${r.id}:${r.selectionReason}`).join(','));
  const bal = run('maestro, balanced (whole pipeline)', (q) => k.search(q, { limit: 10 }).results.map((r) => docId(r.id)));
  const repeats = [pages(), pages(), pages(), pages(), pages()];
  const differing = queries.filter((_, i) => repeats.some((r) => r[i] !== repeats[0]![i])).length;
  k.close();
  process.stdout.write(
    `\n## Cranfield (1,400 documents, 222 judged queries; target nDCG@10 ≥ 0.38 with the whole pipeline)\n${rows.join('\n')}\n` +
      `  five repeats of all ${queries.length} queries (exposure bumped between them): ${differing} pages differ (target 0)\n`,
  );
  summary.push(`Cranfield nDCG@10 whole pipeline ${f(bal.ndcg10, 4)} (target ≥ 0.38) — ${verdict(bal.ndcg10 >= 0.38)}; diversity off ${f(off.ndcg10, 4)}, FTS5 + porter ${f(porter.ndcg10, 4)}, plain BM25 ${f(base!.ndcg10, 4)}`);
  summary.push(`five repeats identical: ${differing} of ${queries.length} pages differ (target 0) — ${verdict(differing === 0)}`);
  return dir;
}

/** CPU time (user + system, ms) of this process's exited children so far: /proc/self/stat cutime + cstime; null off Linux. */
function childCpuMs(): number | null {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    // Fields 16 and 17 of stat(5) (cutime, cstime), counted here from field 3: clock ticks, 100 a second on Linux.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return null;
  }
}

interface CliCall {
  wallMs: number;
  cpuMs: number | null;
}

/** One CLI call as a new process (async, so a daemon in this process can answer it): wall-clock and CPU ms. */
function cliOnce(root: string, dir: string, query: string, env: NodeJS.ProcessEnv): Promise<CliCall> {
  return new Promise((resolve, reject) => {
    const cpu = childCpuMs();
    const t = performance.now();
    const child = spawn(process.execPath, [join(root, 'bin', 'maestro.js'), 'search', ...query.split(' '), '--json', '--workflow-root', dir], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const wallMs = performance.now() - t;
      const after = childCpuMs();
      if (code === 0) resolve({ wallMs, cpuMs: cpu === null || after === null ? null : after - cpu });
      else reject(new Error(`maestro search failed: ${err}`));
    });
  });
}

async function series(n: number, fn: () => Promise<CliCall>): Promise<CliCall[]> {
  const out: CliCall[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

/** p50/p95 wall and mean CPU per call (ticks of 10 ms, so a mean over the calls, not a percentile). */
function cliFigures(calls: CliCall[]): { p50: number; p95: number; cpu: number | null; text: string } {
  const walls = calls.map((c) => c.wallMs);
  const cpus = calls.map((c) => c.cpuMs);
  const cpu = cpus.every((c) => c !== null) ? (cpus as number[]).reduce((a, b) => a + b, 0) / calls.length : null;
  const [p50, p95] = [pct(walls, 50), pct(walls, 95)];
  return { p50, p95, cpu, text: `p50 ${f(p50, 0)} ms  p95 ${f(p95, 0)} ms  CPU ${cpu === null ? 'n/a' : `${f(cpu, 0)} ms`} per call` };
}

/**
 * Cold `maestro search` on a 10k-entry corpus: a new process per call, in process (no daemon) and as a user
 * with a daemon running gets it (the daemon of MAESTRO_HOME, found by its lock; here the knowledge routes
 * served in this process, its lock naming this process).
 */
async function benchColdCli(): Promise<void> {
  const root = join(import.meta.dirname, '..');
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) {
    process.stdout.write('\n(building dist/ for the cold-start figure: tsc -p tsconfig.build.json)\n');
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  }
  const runs = Number(process.env.BENCH_CLI_RUNS ?? 20);
  const dir = mkdtempSync(join(tmpdir(), 'bench-cli-10k-'));
  const home = mkdtempSync(join(tmpdir(), 'bench-cli-home-'));
  const pool = createKnowledgePool({ env: process.env });
  const app = Fastify();
  try {
    const docs = generateCorpus(10_000);
    writeCorpus(dir, docs);
    const [query] = generateQueries(docs, 1, 3);
    const noDaemon = { MAESTRO_HOME: home, MAESTRO_SEARCH_DAEMON: 'off' };
    await cliOnce(root, dir, query!, noDaemon); // the first call writes the on-disk index
    const inProcess = cliFigures(await series(runs, () => cliOnce(root, dir, query!, noDaemon)));
    await app.register(knowledgeRoutes, { pool });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    writeFileSync(join(home, 'daemon.lock'), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: Date.now() }));
    const withDaemon = { MAESTRO_HOME: home, MAESTRO_URL: url };
    await cliOnce(root, dir, query!, withDaemon); // warms the daemon's handle
    const viaDaemon = cliFigures(await series(runs, () => cliOnce(root, dir, query!, withDaemon)));
    const node = cliFigures(await series(runs, () => new Promise<CliCall>((resolve) => {
      const cpu = childCpuMs();
      const t = performance.now();
      spawn(process.execPath, ['-e', '0']).on('exit', () => {
        const after = childCpuMs();
        resolve({ wallMs: performance.now() - t, cpuMs: cpu === null || after === null ? null : after - cpu });
      });
    })));
    process.stdout.write(
      `\n## Cold \`maestro search\` on 10,000 entries (built CLI, new process per call, ${runs} calls each; load average ${load()})\n` +
        `  daemon running (the default)  ${viaDaemon.text} (target p50 ≤ 150 ms)\n` +
        `  no daemon (in process)        ${inProcess.text} (target: slower than through the daemon)\n` +
        `  bare \`node -e 0\`              ${node.text} (the floor on this machine)\n`,
    );
    summary.push(`cold maestro search on 10k with a daemon running: p50 ${f(viaDaemon.p50, 0)} ms, p95 ${f(viaDaemon.p95, 0)} ms (target p50 ≤ 150 ms) — ${verdict(viaDaemon.p50 <= 150)}; bare node p50 ${f(node.p50, 0)} ms`);
    summary.push(`… the daemon only when faster: through it p50 ${f(viaDaemon.p50, 0)} ms / CPU ${viaDaemon.cpu === null ? 'n/a' : f(viaDaemon.cpu, 0)} ms, in process p50 ${f(inProcess.p50, 0)} ms / CPU ${inProcess.cpu === null ? 'n/a' : f(inProcess.cpu, 0)} ms — ${verdict(viaDaemon.p50 < inProcess.p50)}`);
  } finally {
    await app.close();
    pool.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

process.stdout.write(`# bench:search  (node ${process.version}, ${new Date().toISOString()}, load average ${load()})\n`);
for (const s of sizes) benchSize(s);
if (process.env.BENCH_SKIP_CRANFIELD !== '1') rmSync(benchCranfield(), { recursive: true, force: true });
if (process.env.BENCH_SKIP_SECURE_DELETE !== '1') benchSecureDelete(10_000);
if (process.env.BENCH_SKIP_CLI !== '1') await benchColdCli();
process.stdout.write(`\n## Targets   (load average at the end ${load()})\n${summary.map((s) => `  - ${s}`).join('\n')}\n`);
