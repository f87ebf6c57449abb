/**
 * CPU seconds per task through a whole daemon: a `maestro serve` process from
 * compiled JavaScript (as `npm start` runs it) takes easy tasks through
 * execute → review → exec_review (approved at once) → merge with a
 * zero-latency scripted agent. The CPU counted is the daemon's own plus that
 * of every process it and its workers started and reaped (workers, git): the
 * utime/stime/cutime/cstime of /proc/<daemon>/stat plus those of its live
 * children, read once the daemon is idle and again when the last task is done.
 * Linux only.
 *
 * `warmWorkers` is the daemon setting under test: 0 starts a cold Node
 * process per run (the old way), more keeps that many workers warm between runs.
 *
 * Two batches: the first (`warmupTasks`) pays what a daemon pays once — its workers' start (the warm pool starts
 * them on the first runs), their modules and V8's compilation of the hot paths — and the second (`tasks`) is the
 * steady state a daemon that has run a few tasks is in. Both are printed; the target is read on the second.
 * With one batch of 12, the start-up was a tenth of the figure (0.65 against 0.56 CPU s per task).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMigratedDatabase } from '../src/store/open.js';
import { createStore } from '../src/store/store.js';

const CLK_TCK = 100;

function statOf(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the name: state is field 3, so ppid (4) is index 1 and utime (14) index 11.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // gone meanwhile
  }
}

/** CPU seconds the whole machine has spent busy, every core and every process (/proc/stat: user, nice, system, irq, softirq). */
export function machineCpu(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [0, 1, 2, 5, 6].reduce((sum, i) => sum + f[i]!, 0) / CLK_TCK;
}

/**
 * CPU seconds of the daemon and of everything under it: its own, its reaped
 * children's (cutime/cstime), and every live descendant's own and reaped
 * children's. A warm worker still running has not been reaped, and neither has
 * the spawner helper under it, whose reaped children are the git commands the
 * worker ran: counting only the daemon's direct children missed that git.
 */
export function cpuOf(pid: number): { self: number; children: number } {
  const secs = (f: string[], from: number) => (Number(f[from]) + Number(f[from + 1])) / CLK_TCK;
  const own = statOf(pid)!;
  const byParent = new Map<number, string[][]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statOf(entry);
    if (!f) continue;
    const ppid = Number(f[1]);
    if (!byParent.has(ppid)) byParent.set(ppid, []);
    byParent.get(ppid)!.push([entry, ...f]);
  }
  let children = secs(own, 13);
  const queue = [pid];
  while (queue.length) {
    for (const [child, ...f] of byParent.get(queue.shift()!) ?? []) {
      children += secs(f, 11) + secs(f, 13);
      queue.push(Number(child));
    }
  }
  return { self: secs(own, 11), children };
}

const waitUntil = async (check: () => Promise<boolean>, what: string, timeoutMs = 600_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

export interface CpuFigures {
  tasks: number;
  /** The first batch's CPU s per task (daemon and children), start-up included. */
  warmup: { tasks: number; total: number };
  /** CPU s per task: daemon, its reaped children (workers and every git they ran), both. */
  daemon: number;
  children: number;
  total: number;
  /** The idle daemon's own CPU per second (ticks), for scale. */
  idlePerSecond: number;
  wallSeconds: number;
}

/**
 * The benches' daemons tick at the default (1 s), as a user runs them: a run ending, an approval or a merge starts
 * the next step itself, so a faster tick only polls more. BENCH_TICK_MS sets it for comparison (config.json's tickMs).
 */
export function benchTick(): { tickMs?: number } {
  return process.env.BENCH_TICK_MS ? { tickMs: Number(process.env.BENCH_TICK_MS) } : {};
}

/** BENCH_DAEMON_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): node options for the benches' daemons, not their workers. */
export function benchDaemonNodeArgs(): string[] {
  return (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

export async function cpuPerTask(opts: { main: string; root: string; repo: string; tasks: number; warmupTasks: number; warmWorkers: number }): Promise<CpuFigures> {
  const home = join(opts.root, `home-${opts.warmWorkers}`);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ ...benchTick(), maxConcurrentRuns: 3, maxConcurrentRunsPerProject: 2, reservedConflictSlots: 1, logLevel: 'warn', warmWorkers: opts.warmWorkers }));
  const script = join(opts.root, 'cpu-agent.yaml');
  if (!existsSync(script)) {
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - write: { path: "out/{{title}}.txt", content: "{{title}}\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
  }
  const store = createStore(await openMigratedDatabase(`sqlite:${join(home, 'maestro.db')}`));
  const child = spawn(process.execPath, [...benchDaemonNodeArgs(), opts.main, 'serve', '--home', home, '--port', '0', '--no-demo'], { stdio: 'ignore' });
  try {
    const pid = child.pid!;
    await waitUntil(async () => (await store.db.all(`SELECT name FROM daemons`)).length > 0, 'the daemon to register');
    // Let start-up settle, then measure the idle daemon for scale.
    await new Promise((r) => setTimeout(r, 1500));
    const i0 = cpuOf(pid);
    await new Promise((r) => setTimeout(r, 2000));
    const i1 = cpuOf(pid);
    const project = await store.projects.create({ name: `cpu-${opts.warmWorkers}`, repoPath: opts.repo, config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    // Creates `count` tasks and waits until every task of the project is done.
    let created = 0;
    const batch = async (count: number) => {
      for (let i = 0; i < count; i++, created++) {
        const title = `w${opts.warmWorkers}-${String(created).padStart(3, '0')}`;
        await store.tasks.create({ projectId: project.id, title, complexity: 'easy', ownedFiles: [`out/${title}.txt`] });
      }
      await waitUntil(async () => {
        const tasks = await store.tasks.list({ projectId: project.id, limit: 10_000 });
        const stuck = tasks.find((t) => t.status === 'needs_attention');
        if (stuck) throw new Error(`${stuck.title} needs attention: ${stuck.lastRunError}`);
        return tasks.every((t) => t.status === 'done');
      }, 'every task done');
    };
    const w0 = cpuOf(pid);
    await batch(opts.warmupTasks);
    const c0 = cpuOf(pid);
    const t0 = Date.now();
    await batch(opts.tasks);
    const wallSeconds = (Date.now() - t0) / 1000;
    const c1 = cpuOf(pid);
    const daemon = (c1.self - c0.self) / opts.tasks;
    const children = (c1.children - c0.children) / opts.tasks;
    const warmup = { tasks: opts.warmupTasks, total: (c0.self + c0.children - w0.self - w0.children) / Math.max(1, opts.warmupTasks) };
    return { tasks: opts.tasks, warmup, daemon, children, total: daemon + children, idlePerSecond: (i1.self - i0.self) / 2, wallSeconds };
  } finally {
    const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
    child.kill('SIGTERM');
    await exited;
    await store.close();
  }
}
