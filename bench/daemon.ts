/**
 * bench:daemon — the daemon's live paths and throughput.
 *   1. token → SSE client latency (p50/p95) with 50 subscribers (baseline: 1 subscriber)
 *   2. status change → WebSocket client latency (p50/p95), from a client in its own process
 *   3. throughput of N demo scenarios (BENCH_SCENARIOS, 8) with a zero-latency scripted agent, 1 worker
 *      vs 4, in BENCH_ROUNDS (3) rounds, medians compared, with the CPU the daemon, its workers and git
 *      spent on them and the ratio that CPU allows on this machine's cores
 *   4. resident memory of an idle daemon (baseline: a bare `node -e` process)
 * 2–4 run `maestro serve` compiled (test/helpers/build.ts), as `npm start` does; 1 runs the daemon
 * in this process to read the ingest times. BENCH_KEEP=1 keeps the homes (their maestro.db holds
 * every event, for a timeline of where the time went); BENCH_CPU_PROF=<folder> profiles each daemon.
 * Prints figures and ratios; asserts nothing about time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { resolveConfig } from '../src/config/config.js';
import { startDaemon, type Daemon } from '../src/app/daemon.js';
import { createDemo } from '../src/demo/demo.js';
import { git } from '../src/git/git.js';
import { openMigratedDatabase } from '../src/store/open.js';
import { createStore } from '../src/store/store.js';
import { buildForTests } from '../test/helpers/build.js';
import { benchTick, cpuOf } from './cpuPerTask.js';

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
const f = (n: number, d = 1) => n.toFixed(d);
const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
const silent = new Writable({ write: (_chunk, _enc, done) => done() });

async function daemon(overrides: Record<string, unknown> = {}): Promise<Daemon> {
  const home = tmp('maestro-bench-home-');
  return startDaemon({ ...resolveConfig({ home, port: 0 }, {}), tickMs: 50, logLevel: 'silent', ...overrides }, { env: process.env, logDestination: silent, heartbeatMs: 500 });
}

async function repo(): Promise<string> {
  const dir = tmp('maestro-bench-repo-');
  await git(dir, ['init', '-q', '-b', 'main']);
  writeFileSync(join(dir, 'README.md'), '# bench\n');
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '-m', 'init']);
  return dir;
}

async function benchSse(subscribers: number): Promise<number[]> {
  const d = await daemon();
  try {
    const script = join(tmp('maestro-bench-script-'), 'tokens.json');
    const tokens = 60;
    // Each token carries the time it was emitted; the worker writes it to the outbox at once.
    writeFileSync(script, JSON.stringify({ steps: [{ match: { role: 'execute' }, actions: Array.from({ length: tokens }, () => [{ wait: 20 }, { text: 'x' }]).flat() }, { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] }] }));
    const p = await d.store.projects.create({ name: 'sse', repoPath: await repo(), config: { provider: { kind: 'scripted', script } } });
    const t = await d.store.tasks.create({ projectId: p.id, title: 'stream', complexity: 'easy' });
    const latencies: number[] = [];
    let ready = 0;
    let resolveReady!: () => void;
    const allReady = new Promise<void>((r) => (resolveReady = r));
    const clients = Array.from({ length: subscribers }, async () => {
      const ac = new AbortController();
      const res = await fetch(`${d.url}/api/tasks/${t.id}/stream`, { headers: { authorization: `Bearer ${d.token}` }, signal: ac.signal });
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let buf = '';
      let seen = 0;
      if (++ready === subscribers) resolveReady();
      try {
        while (seen < tokens) {
          const { value, done } = await reader.read();
          if (done) break;
          const now = Date.now();
          buf += dec.decode(value, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (!block.includes('event: token')) continue;
            const id = /id: (\S+)/.exec(block)?.[1];
            const at = id ? atById.get(id) : undefined;
            if (at !== undefined) latencies.push(now - at);
            seen++;
          }
        }
      } finally {
        ac.abort();
      }
    });
    // The record time: read from the outbox as the ingestor sees it (the worker stamps `at` when it writes).
    const atById = new Map<string, number>();
    const off = d.bus.onStream(t.id, (item) => {
      const at = (item.data as { at?: number }).at;
      if (typeof at === 'number') atById.set(item.id, at);
    });
    await allReady;
    d.orchestrator.kick();
    await Promise.all(clients);
    off();
    return latencies;
  } finally {
    await d.stop({ graceMs: 1000 });
  }
}

/**
 * A WebSocket client in a process of its own, as the board is: it collects the
 * latency of each status change and prints them when its stdin closes.
 */
const OUT_OF_PROCESS_CLIENT = `
import WebSocket from 'ws';
const lat = [];
const ws = new WebSocket(process.env.WS_URL);
ws.on('open', () => process.stdout.write('open\\n'));
ws.on('message', (m) => {
  const msg = JSON.parse(String(m));
  if (msg.type === 'event' && msg.event.type === 'task.status') lat.push(Date.now() - msg.event.at);
});
process.stdin.on('end', () => { process.stdout.write(JSON.stringify(lat) + '\\n'); ws.terminate(); });
process.stdin.resume();
`;

function separateClient(url: string): { opened: Promise<void>; finish: () => Promise<number[]> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', OUT_OF_PROCESS_CLIENT], { env: { ...process.env, WS_URL: url }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const opened = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => out.includes('open\n') && resolve());
    child.once('exit', (code) => reject(new Error(`WebSocket client exited ${code}`)));
  });
  const finish = async () => {
    child.stdin!.end();
    await new Promise((r) => child.once('exit', r));
    return JSON.parse(out.trim().split('\n').pop()!) as number[];
  };
  return { opened, finish };
}

interface Throughput {
  ms: number;
  /** Status change → a WebSocket client in its own process, as the board is. */
  latencies: number[];
  /** CPU seconds over the timed part: the daemon's own, and that of every process it and its workers started (workers, git). */
  cpu: { daemon: number; children: number };
  /** Runs by kind, and the worker processes that served them. */
  runs: Record<string, number>;
}

interface Served {
  pid: number;
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** `maestro serve` from the compiled build, as `npm start` runs it; resolves once it listens. */
async function serve(main: string, home: string): Promise<Served> {
  // BENCH_CPU_PROF=<folder>: each daemon writes a V8 CPU profile there when it stops.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, main, 'serve', '--home', home, '--port', '0', '--no-demo'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /daemon on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`maestro serve exited ${code}: ${err}`)));
  });
  const token = readFileSync(join(home, 'token'), 'utf8').trim();
  return { pid: child.pid!, url, token, stop: async () => {
    child.kill('SIGTERM');
    await exited;
  } };
}

/**
 * N demo scenarios through a `maestro serve` of its own (from dist/, as a user runs it) allowed
 * `workers` runs at once. The scenarios are created, held (cancelled) before the daemon starts, and
 * released together once it listens, so neither the daemon's start nor the demo repositories' set-up
 * is timed.
 */
async function benchThroughput(main: string, workers: number, scenarios: number): Promise<Throughput> {
  const home = tmp('maestro-bench-tp-');
  writeFileSync(join(home, 'config.json'), JSON.stringify({ ...benchTick(), logLevel: 'warn', maxConcurrentRuns: workers, maxConcurrentRunsPerProject: workers, reservedConflictSlots: 0 }));
  const store = createStore(await openMigratedDatabase(`sqlite:${join(home, 'maestro.db')}`));
  const parents: string[] = [];
  for (let i = 0; i < scenarios; i++) {
    const { task } = await createDemo(store, join(home, `demo-${i}`), { autoApproveAfterMs: 0, autoReplyAfterMs: 0 }, `demo-${i}`);
    await store.tasks.transition(task.id, 'cancelled', { reason: 'held until the bench starts' });
    parents.push(task.id);
  }
  const d = await serve(main, home);
  const client = separateClient(`${d.url.replace('http', 'ws')}/api/ws?token=${d.token}`);
  let latencies: number[] | null = null;
  try {
    await client.opened;
    const c0 = cpuOf(d.pid);
    const t0 = performance.now();
    for (const id of parents) await store.tasks.retry(id, 'cancelled');
    for (;;) {
      const tasks = await Promise.all(parents.map((id) => store.tasks.get(id)));
      const stuck = tasks.find((t) => t.status === 'needs_attention');
      if (stuck) throw new Error(`demo task needs attention: ${stuck.lastRunError}`);
      if (tasks.every((t) => t.status === 'done')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ms = performance.now() - t0;
    const c1 = cpuOf(d.pid);
    latencies = await client.finish();
    const runs: Record<string, number> = {};
    const pids = new Set<number>();
    for (const r of await store.runs.list({ limit: 10_000 })) {
      runs[r.kind] = (runs[r.kind] ?? 0) + 1;
      if (r.workerPid) pids.add(r.workerPid);
    }
    runs['worker processes'] = pids.size;
    return { ms, latencies, cpu: { daemon: c1.self - c0.self, children: c1.children - c0.children }, runs };
  } finally {
    if (!latencies) await client.finish().catch(() => []);
    await d.stop();
    await store.close();
  }
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function benchIdle(main: string): Promise<{ daemon: number; bare: number }> {
  const d = await serve(main, tmp('maestro-bench-idle-'));
  await new Promise((r) => setTimeout(r, 5000));
  const daemonRss = rssOf(d.pid);
  await d.stop();
  const bare = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 3000)']);
  await new Promise((r) => setTimeout(r, 1000));
  const bareRss = rssOf(bare.pid!);
  bare.kill();
  return { daemon: daemonRss, bare: bareRss };
}

const build = buildForTests();
try {
  console.log('== token → SSE client latency ==');
  const one = await benchSse(1);
  const fifty = await benchSse(50);
  console.log(`1 subscriber:   p50 ${f(pct(one, 0.5))} ms  p95 ${f(pct(one, 0.95))} ms  (${one.length} deliveries)`);
  console.log(`50 subscribers: p50 ${f(pct(fifty, 0.5))} ms  p95 ${f(pct(fifty, 0.95))} ms  (${fifty.length} deliveries)   target p95 < 20 ms`);
  console.log(`ratio p95 50 / 1 subscribers: ${f(pct(fifty, 0.95) / Math.max(1, pct(one, 0.95)), 2)}×`);
  console.log('(latency = client receipt − the outbox record time the worker stamped; it includes the file watch and ingest)');

  console.log('\n== demo scenarios, zero-latency scripted agent, maestro serve from dist/ ==');
  // Rounds of both, the order alternating (a machine that gets busier favours neither); the medians are compared.
  const scenarios = Number(process.env.BENCH_SCENARIOS ?? 8);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const trials: Record<1 | 4, Throughput[]> = { 1: [], 4: [] };
  for (let r = 0; r < rounds; r++) {
    for (const workers of r % 2 ? ([4, 1] as const) : ([1, 4] as const)) trials[workers].push(await benchThroughput(build.main, workers, scenarios));
    console.log(`round ${r + 1}: 1 worker ${f(trials[1][r]!.ms / 1000, 2)} s, 4 workers ${f(trials[4][r]!.ms / 1000, 2)} s: ${f(trials[1][r]!.ms / trials[4][r]!.ms, 2)}×`);
  }
  const median = (ts: Throughput[]) => [...ts].sort((a, b) => a.ms - b.ms)[Math.floor(ts.length / 2)]!;
  const w1 = median(trials[1]);
  const w4 = median(trials[4]);
  const tpm = (ms: number) => (scenarios / ms) * 60_000;
  console.log(`1 worker:  ${scenarios} scenarios in ${f(w1.ms / 1000, 2)} s = ${f(tpm(w1.ms))} scenarios/min (median of ${rounds})`);
  console.log(`4 workers: ${scenarios} scenarios in ${f(w4.ms / 1000, 2)} s = ${f(tpm(w4.ms))} scenarios/min (median of ${rounds})`);
  console.log(`ratio 4 / 1 workers: ${f(w1.ms / w4.ms, 2)}×   target ≥ 1.6×`);
  for (const [name, w] of [['1 worker', w1], ['4 workers', w4]] as const) {
    const runs = Object.entries(w.runs).map(([k, n]) => `${k} ${n}`).join(', ');
    console.log(`${name}: CPU ${f(w.cpu.daemon + w.cpu.children, 2)} s (daemon ${f(w.cpu.daemon, 2)} s, workers and git ${f(w.cpu.children, 2)} s), ${f((w.cpu.daemon + w.cpu.children) / (w.ms / 1000), 2)} cores busy on average; ${runs}`);
  }
  // However well four workers overlap, their CPU seconds need this long on this machine's cores.
  const cores = availableParallelism();
  const ceiling = w1.ms / 1000 / ((w4.cpu.daemon + w4.cpu.children) / cores);
  console.log(`the CPU allows at most ${f(ceiling, 2)}× on ${cores} cores (1 worker's time against 4 workers' CPU seconds spread over every core)`);
  // One worker's run already overlaps the daemon and git: the same work on every core is at most this much faster.
  const busy1 = (w1.cpu.daemon + w1.cpu.children) / (w1.ms / 1000);
  console.log(`1 worker keeps ${f(busy1, 2)} cores busy: with no extra work at all, ${cores} cores allow 4 workers at most ${f(cores / busy1, 2)}×`);

  console.log('\n== status change → WebSocket client latency ==');
  const apart = [...trials[1], ...trials[4]].flatMap((t) => t.latencies);
  console.log(`client in its own process (as the board): p50 ${f(pct(apart, 0.5))} ms  p95 ${f(pct(apart, 0.95))} ms  (${apart.length} status changes)   target p95 < 50 ms`);
  console.log('(latency = client receipt − the time the change\'s transaction began)');
  console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(', ')}`);

  console.log('\n== idle daemon memory ==');
  const idle = await benchIdle(build.main);
  console.log(`idle daemon RSS ${f(idle.daemon)} MB (maestro serve from dist/)   bare node ${f(idle.bare)} MB   ratio ${f(idle.daemon / idle.bare, 2)}×   target < 150 MB`);
} finally {
  build.remove();
  if (process.env.BENCH_KEEP) console.log(`kept: ${dirs.join(' ')}`);
  else for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
