/**
 * bench:pipeline — what Maestro itself costs per task, with a zero-latency
 * scripted agent, and what running the two reviews concurrently saves.
 *
 * 1. Per-task overhead: each task runs execute → review → mergeIntoMain in a
 *    real temporary repository. Every git subprocess Maestro starts is timed
 *    (observeGit); "own" time is the task's wall time minus that git time: the
 *    worker's bookkeeping (job parsing, outbox, stages, transcript, the scripted
 *    agent's file writes). Target: own ≤ 1.5 × git. Also split by stage, and
 *    compared with a hand-written minimal git sequence doing the same change.
 * 2. Review: the same review run with the two reviews concurrent (the pipeline)
 *    and serial (the baseline), each reviewer taking REVIEW_MS. Target: the
 *    concurrent review section at most 0.55 of the serial one.
 *
 * 3. CPU per task through a whole daemon (bench/cpuPerTask.ts): the daemon, its
 *    workers and every git they run, with cold workers (a Node process per
 *    run, warmWorkers 0) and with the default warm pool; after a first batch
 *    of WARMUP_TASKS that pays the start-up, printed beside. Target: <= 0.6 s.
 *
 * Prints figures only; it asserts nothing. Usage: npm run bench:pipeline [-- tasks]
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { observeGit } from '../src/git/git.js';
import { mergeIntoMain } from '../src/git/merge.js';
import { parseJob, type JobInput } from '../src/executor/protocol/job.js';
import { readOutbox, type PhaseRecord } from '../src/executor/protocol/outbox.js';
import { runPipeline } from '../src/executor/run.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { buildForTests } from '../test/helpers/build.js';
import { cpuPerTask } from './cpuPerTask.js';

const run = promisify(execFile);
const TASKS = Number(process.argv[2] ?? 12);
const WARMUP = 2;
/** bench 3's first batch: the daemon's and its workers' start-up, measured apart from the steady state. */
const WARMUP_TASKS = 6;
// Long enough that the review's own fixed costs (a few git calls) do not dominate on a loaded machine.
const REVIEW_MS = 300;
const REVIEW_REPEATS = 3;
const ENV = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

async function sh(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', args, { cwd, env: ENV })).stdout.trim();
}

async function makeRepo(root: string): Promise<string> {
  const repo = join(root, 'repo');
  mkdirSync(repo, { recursive: true });
  await sh(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# bench\n');
  await sh(repo, 'add', 'README.md');
  await sh(repo, 'commit', '-q', '-m', 'initial');
  return repo;
}

function job(root: string, repo: string, script: string, kind: 'execute' | 'review', taskId: string, runId: string): JobInput {
  return {
    schemaVersion: 1, runId, taskId, traceId: `trace-${runId}`, kind,
    task: { title: `Task ${taskId}`, complexity: 'medium', ownedFiles: [`src/${taskId}.ts`] },
    project: { id: 'bench', repoPath: repo, worktreeRoot: join(root, 'worktrees') },
    provider: { kind: 'scripted', script },
    checks: [],
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

/** Stage wall times of one run from its outbox (monotonic start/done pairs). */
function stageTimes(runDir: string): Map<string, number> {
  const out = new Map<string, number>();
  const starts = new Map<string, number>();
  for (const r of readOutbox(runDir).records) {
    if (r.type !== 'phase' || r.mono === undefined || r.stage === 'run') continue;
    const p = r as PhaseRecord;
    if (p.state === 'start') starts.set(p.stage, p.mono!);
    if (p.state === 'done' && starts.has(p.stage)) out.set(p.stage, (out.get(p.stage) ?? 0) + p.mono! - starts.get(p.stage)!);
  }
  return out;
}

async function overheadBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'maestro-bench-'));
  try {
    const repo = await makeRepo(root);
    const script = join(root, 'agent.yaml');
    writeFileSync(script, stringify({ steps: [
      { match: { role: 'execute' }, actions: [{ write: { path: 'src/{{title}}.ts', content: 'export const x = 1;\n' } }] },
      { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
    ] }));
    let gitMs = 0;
    let gitCalls = 0;
    const stop = observeGit((c) => {
      gitMs += c.ms;
      gitCalls++;
    });
    const perTask: Array<{ total: number; git: number; calls: number; stages: Map<string, number>; merge: number }> = [];
    for (let i = 0; i < TASKS + WARMUP; i++) {
      const taskId = `T${i}`;
      gitMs = 0;
      gitCalls = 0;
      const t0 = performance.now();
      const e = job(root, repo, script, 'execute', taskId, `e${i}`);
      e.task.ownedFiles = ['src/'];
      const eDir = join(root, 'runs', `e${i}`);
      const er = await runPipeline(parseJob(e), { runDir: eDir });
      if (er.type !== 'result') throw new Error(`execute failed: ${JSON.stringify(er)}`);
      const rDir = join(root, 'runs', `r${i}`);
      const rr = await runPipeline(parseJob({ ...job(root, repo, script, 'review', taskId, `r${i}`), task: e.task }), { runDir: rDir });
      if (rr.type !== 'result') throw new Error(`review failed: ${JSON.stringify(rr)}`);
      const m0 = performance.now();
      await mergeIntoMain({ repoPath: repo, branch: `maestro/${taskId}-v1`, baseBranch: 'main', strategy: 'merge' });
      const t1 = performance.now();
      const stages = stageTimes(eDir);
      for (const [k, v] of stageTimes(rDir)) stages.set(k === 'worktree' ? 'worktree (review)' : k, v);
      if (i >= WARMUP) perTask.push({ total: t1 - t0, git: gitMs, calls: gitCalls, stages, merge: t1 - m0 });
    }
    stop();

    // Baseline: the same change done by hand with the fewest git commands.
    const bareRepo = await makeRepo(join(root, 'bare'));
    const bare: number[] = [];
    for (let i = 0; i < TASKS + WARMUP; i++) {
      const t0 = performance.now();
      const wt = join(root, 'bare', 'wt', `B${i}`);
      await sh(bareRepo, 'worktree', 'add', '-q', '-b', `b/${i}`, wt, 'main');
      mkdirSync(join(wt, 'src'), { recursive: true });
      writeFileSync(join(wt, 'src', `B${i}.ts`), 'export const x = 1;\n');
      await sh(wt, 'add', '-A');
      await sh(wt, 'commit', '-q', '-m', `task ${i}`);
      await sh(wt, 'diff', '--numstat', 'main...HEAD');
      await sh(wt, 'diff', 'main...HEAD');
      await sh(bareRepo, 'merge', '--ff-only', '-q', `b/${i}`);
      if (i >= WARMUP) bare.push(performance.now() - t0);
    }

    const total = median(perTask.map((t) => t.total));
    const git = median(perTask.map((t) => t.git));
    const own = median(perTask.map((t) => t.total - t.git));
    const calls = median(perTask.map((t) => t.calls));
    const bareMs = median(bare);
    console.log(`\n== per-task overhead (${TASKS} tasks, zero-latency scripted agent, medians) ==`);
    console.log(`task wall time (execute + review + merge): ${fmt(total)}`);
    console.log(`  git subprocesses Maestro ran:            ${fmt(git)} over ${calls} calls (${fmt(git / calls)} each)`);
    console.log(`  Maestro's own time (wall - git):         ${fmt(own)}`);
    console.log(`  own / git ratio:                         ${(own / git).toFixed(2)}  (target <= 1.5) ${own / git <= 1.5 ? 'MET' : 'NOT MET'}`);
    console.log(`  wall / git ratio:                        ${(total / git).toFixed(2)}`);
    console.log(`minimal hand-written git sequence (7 commands): ${fmt(bareMs)}; Maestro wall / minimal: ${(total / bareMs).toFixed(2)}`);
    console.log('by stage (median ms):');
    const names = [...new Set(perTask.flatMap((t) => [...t.stages.keys()]))];
    for (const n of names) console.log(`  ${n.padEnd(20)} ${median(perTask.map((t) => t.stages.get(n) ?? 0)).toFixed(1)}`);
    console.log(`  ${'mergeIntoMain'.padEnd(20)} ${median(perTask.map((t) => t.merge)).toFixed(1)}`);
    const staged = median(perTask.map((t) => [...t.stages.values()].reduce((a, b) => a + b, 0) + t.merge));
    console.log(`  ${'bookkeeping (rest)'.padEnd(20)} ${(total - staged).toFixed(1)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function reviewBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'maestro-bench-review-'));
  try {
    const repo = await makeRepo(root);
    const script = join(root, 'agent.yaml');
    writeFileSync(script, stringify({ steps: [
      { match: { role: 'execute' }, actions: [{ write: { path: 'src/R.ts', content: 'export const a = 1;\n' } }] },
      { match: { role: 'review' }, actions: [{ wait: REVIEW_MS }, { verdict: { verdict: 'approve', findings: [] } }] },
    ] }));
    const e = await runPipeline(parseJob(job(root, repo, script, 'execute', 'R', 'e')), { runDir: join(root, 'runs', 'e') });
    if (e.type !== 'result') throw new Error(JSON.stringify(e));
    const section = (runDir: string) => {
      const phases = readOutbox(runDir).records.filter((r): r is PhaseRecord => r.type === 'phase' && r.stage.startsWith('review:') && r.mono !== undefined);
      return Math.max(...phases.filter((p) => p.state === 'done').map((p) => p.mono!)) - Math.min(...phases.filter((p) => p.state === 'start').map((p) => p.mono!));
    };
    const results = { concurrent: [] as number[], serial: [] as number[], concurrentRun: [] as number[], serialRun: [] as number[] };
    for (let i = 0; i < REVIEW_REPEATS; i++) {
      for (const mode of ['concurrent', 'serial'] as const) {
        const runDir = join(root, 'runs', `${mode}-${i}`);
        const t0 = performance.now();
        const r = await runPipeline(parseJob(job(root, repo, script, 'review', 'R', `${mode}-${i}`)), { runDir, serialReviews: mode === 'serial' });
        if (r.type !== 'result') throw new Error(JSON.stringify(r));
        results[`${mode}Run`].push(performance.now() - t0);
        results[mode].push(section(runDir));
      }
    }
    const c = median(results.concurrent);
    const s = median(results.serial);
    console.log(`\n== review: concurrent vs serial (each reviewer ${REVIEW_MS} ms, ${REVIEW_REPEATS} repeats, medians) ==`);
    console.log(`review section: concurrent ${fmt(c)}, serial ${fmt(s)}, ratio ${(c / s).toFixed(3)} (target <= 0.55) ${c / s <= 0.55 ? 'MET' : 'NOT MET'}`);
    const cr = median(results.concurrentRun);
    const sr = median(results.serialRun);
    console.log(`whole review run: concurrent ${fmt(cr)}, serial ${fmt(sr)}, ratio ${(cr / sr).toFixed(3)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function cpuBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'maestro-bench-cpu-'));
  const build = buildForTests();
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  try {
    console.log(`\n== CPU per task through a daemon (${TASKS} easy tasks after ${WARMUP_TASKS} to warm up: execute, review, merge; zero-latency scripted agent) ==`);
    console.log(`load average before: ${load()} on ${cpus().length} cores`);
    for (const warmWorkers of [0, DEFAULTS.warmWorkers]) {
      const repo = await makeRepo(join(root, `repo-${warmWorkers}`));
      const f = await cpuPerTask({ main: build.main, root, repo, tasks: TASKS, warmupTasks: WARMUP_TASKS, warmWorkers });
      const label = warmWorkers === 0 ? 'cold worker per run (warmWorkers 0)' : `warm pool (warmWorkers ${warmWorkers})`;
      console.log(`${label.padEnd(36)} ${f.total.toFixed(3)} CPU s/task (daemon ${f.daemon.toFixed(3)}, workers + git ${f.children.toFixed(3)}); ${f.wallSeconds.toFixed(1)} s wall; idle daemon ${f.idlePerSecond.toFixed(3)} CPU s/s  target <= 0.6: ${f.total <= 0.6 ? 'MET' : 'NOT MET'}`);
      console.log(`${''.padEnd(36)} the first ${f.warmup.tasks} tasks, start-up included: ${f.warmup.total.toFixed(3)} CPU s/task`);
    }
    console.log(`load average after: ${load()}`);
  } finally {
    build.remove();
    rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

if (process.env.BENCH_ONLY !== 'cpu') {
  await overheadBench();
  await reviewBench();
}
await cpuBench();
