/**
 * spawnWorker(runDir): starts the worker as its own process (its own process
 * group, so stopping it also stops the agent and checks it started) and
 * registers it with trackResource until it exits. startWorkerProcess is the
 * part the warm pool (workerPool.ts) shares.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { resolve } from 'node:path';
import { processAgentEnv, RUN_DIR_ENV } from '../lib/agentEnv.js';
import { nodeEntry } from '../lib/processes.js';
import { trackResource } from '../lib/resources.js';

export interface WorkerHandle {
  pid: number;
  child: ChildProcess;
  /** Resolves when the run ends: the exit code (null when ended by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM: the worker ends its current record and exits. */
  stop(): void;
  /** SIGKILL to the whole process group: a crash, for tests and hung workers. */
  kill(): void;
  /** Lets the run go on without this process (the daemon is leaving; the next one adopts the run by pid). */
  detach(): void;
  /** The last 8 kB the worker wrote to stderr (why it exited 1 or 2). */
  stderrTail(): string;
}

/** A started worker process, cold or warm. */
export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM to the worker alone: it aborts at its next safe point. */
  stop(): void;
  /** SIGKILL to its whole process group. */
  kill(): void;
  stderrTail(): string;
}

/** How a worker process starts: its output, an IPC channel (a warm worker), and its nice value (config workerNice). */
export interface WorkerStart {
  stdio?: 'ignore' | 'inherit';
  ipc?: boolean;
  /** Given to the worker as soon as it is started, while Node is still loading: all its runs start (agent, git, checks) inherit it. */
  nice?: number;
}

export function startWorkerProcess(arg: string, env: NodeJS.ProcessEnv, options: WorkerStart = {}): WorkerProcess {
  const { file, execArgv, cwd } = nodeEntry(import.meta.url, 'executor/worker');
  const out = options.stdio ?? 'ignore';
  const child = spawn(process.execPath, [...execArgv, file, arg], {
    cwd,
    env,
    stdio: ['ignore', out, out === 'inherit' ? 'inherit' : 'pipe', ...(options.ipc ? ['ipc' as const] : [])],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start a worker (${arg})`);
  if (options.nice) lowerPriority(pid, options.nice);
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  const release = trackResource('process', `worker ${pid} (${arg})`, () => signalGroup('SIGKILL'));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-8000);
  });
  // A failed message or signal to the worker is an 'error' event: kept with its stderr, never thrown in the daemon.
  child.on('error', (err) => {
    stderr = `${stderr}\n[maestro] worker ${pid}: ${err.message}`.slice(-8000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      // Whatever the worker started in its group goes with it.
      signalGroup('SIGKILL');
      release();
      resolve({ code, signal });
    });
  });
  return { pid, child, exited, stop: () => {
      // The worker alone: it aborts at its next safe point. Signalling the whole group
      // would also kill the git or check it is waiting on, turning a clean stop into a failure.
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }, kill: () => signalGroup('SIGKILL'), stderrTail: () => stderr };
}

/** A cold worker: a process of its own for one run. */
export function spawnWorker(runDir: string, options: { env?: NodeJS.ProcessEnv } & Omit<WorkerStart, 'ipc'> = {}): WorkerHandle {
  // The caller's environment replaces the daemon's (the orchestrator passes an allowlist, src/lib/agentEnv.ts);
  // `maestro load` in the agent records into this run.
  const env = { ...(options.env ?? processAgentEnv()), [RUN_DIR_ENV]: resolve(runDir) };
  const proc = startWorkerProcess(resolve(runDir), env, { stdio: options.stdio, nice: options.nice });
  return { ...proc, detach: () => proc.child.unref() };
}

/**
 * Gives a process we just started a nice value. Raising one's own children's is always allowed; a process that
 * is gone already (it failed to start) has nothing to lower, and its exit says why.
 */
function lowerPriority(pid: number, nice: number): void {
  try {
    setPriority(pid, nice);
  } catch {
    // ESRCH: exited already.
  }
}
