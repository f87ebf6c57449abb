/**
 * WorkerPool: worker processes kept warm between runs. A cold worker costs a
 * Node start and its imports for every run: about 0.1 CPU s from the build's
 * bundle (0.05 s of it Node itself; 0.2 s with its modules loaded one by one,
 * scripts/bundle.mjs), and two of them per task (execute, review).
 * bench:pipeline, a cold worker per run: 0.62 CPU s per task with modules
 * loaded one by one, 0.48-0.51 s bundled (0.21-0.24 s with warm workers).
 *
 * What stays as with cold workers (the crash-safety contract):
 *   - one run at a time per process, so a worker's death fails only its run;
 *   - a run's state lives in its directory (job.json, outbox, stages.json), and
 *     the run's pid is the worker's, so after a kill -9 of the daemon the next
 *     one adopts the run by pid: the worker notices its IPC channel closed,
 *     finishes that run and exits (worker.ts);
 *   - stop() is SIGTERM to the worker (the run ends INTERRUPTED, the worker
 *     exits), kill() is SIGKILL to its process group.
 * A worker is reused only by a run with exactly the same environment (the
 * allowlist, the provider's credentials and the project's passEnv differ per
 * run), and retired after MAX_RUNS runs or IDLE_MS idle. Beyond `warm`, a worker
 * back from a run waits BURST_IDLE_MS for the next one: a daemon running four
 * at once with two kept warm used to end two workers after every run and start
 * two cold ones for the next (9 processes for 40 runs in bench:daemon, 0.5 CPU s
 * each from the sources), so four workers did less than one.
 *
 *   spawned → ready → busy ⇄ idle → retired (SIGTERM) | dead
 */
import { RUN_DIR_ENV } from '../lib/agentEnv.js';
import { resolve } from 'node:path';
import { spawnWorker, startWorkerProcess, type WorkerHandle, type WorkerProcess } from './spawn.js';
import type { WarmReply, WarmRequest } from './worker.js';

const SECOND = 1000;
/** An idle worker holds about 60 MB; one unused this long is let go. */
export const IDLE_MS = 60 * SECOND;
/** How long a worker beyond `warm` waits for another run: the gap between runs of a busy daemon. */
export const BURST_IDLE_MS = 5 * SECOND;
/** Runs one process serves before it is replaced: bounds whatever a long-lived process accumulates. */
export const MAX_RUNS = 100;

export interface WorkerPoolOptions {
  /** Idle workers kept warm; 0 starts a cold process per run. */
  warm: number;
  idleMs?: number;
  /** How long a worker beyond `warm` stays idle (BURST_IDLE_MS). */
  burstIdleMs?: number;
  maxRuns?: number;
  /** The workers' nice value (config workerNice); 0 or unset: the daemon's. */
  nice?: number;
}

interface WarmWorker {
  proc: WorkerProcess;
  key: string;
  runs: number;
  ready: Promise<boolean>;
  /** The current run's ending, set while busy. */
  onDone: ((code: number) => void) | null;
  idleTimer: NodeJS.Timeout | null;
}

/** The environment's identity, without the run directory (a warm worker sets that per run). */
function envKey(env: NodeJS.ProcessEnv): string {
  return JSON.stringify(Object.entries(env).filter(([k, v]) => k !== RUN_DIR_ENV && v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export class WorkerPool {
  private readonly idle: WarmWorker[] = [];
  private readonly live = new Set<WarmWorker>();
  private stopped = false;

  constructor(private readonly opts: WorkerPoolOptions) {}

  /** Starts `runDir` on a warm worker with the same environment, or on a new one. */
  run(runDir: string, env: NodeJS.ProcessEnv): WorkerHandle {
    if (this.opts.warm <= 0 || this.stopped) return spawnWorker(runDir, { env, nice: this.opts.nice });
    const key = envKey(env);
    const i = this.idle.findIndex((w) => w.key === key);
    const worker = i >= 0 ? this.idle.splice(i, 1)[0]! : this.spawn(env, key);
    if (worker.idleTimer) clearTimeout(worker.idleTimer);
    worker.idleTimer = null;
    return this.assign(worker, resolve(runDir));
  }

  /**
   * Workers for runs about to start with these environments (one each), unless enough are idle or starting: each
   * process starts while the daemon prepares its run (the clone's sync, the brief), not once the run is ready. A
   * daemon's first run waited 0.4 s for its cold worker; three daemons starting theirs on two cores, 1.3–1.9 s.
   * One whose run does not come is let go like any idle worker.
   */
  prestart(envs: NodeJS.ProcessEnv[]): void {
    if (this.opts.warm <= 0 || this.stopped) return;
    const wanted = new Map<string, { env: NodeJS.ProcessEnv; n: number }>();
    for (const env of envs) {
      const key = envKey(env);
      const w = wanted.get(key);
      if (w) w.n++;
      else wanted.set(key, { env, n: 1 });
    }
    for (const [key, { env, n }] of wanted) {
      for (let have = this.idle.filter((w) => w.key === key).length; have < n; have++) this.release(this.spawn(env, key));
    }
  }

  /** Idle workers right now (tests and the bench look). */
  get idleCount(): number {
    return this.idle.length;
  }

  /** Keeps workers warm again after stop() (a restarted orchestrator). */
  start(): void {
    this.stopped = false;
  }

  /**
   * Ends every worker without a run (idle, or just released); workers on a run are the
   * caller's to stop or detach first. Runs started afterwards get cold workers.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.idle.length = 0;
    const free = [...this.live].filter((w) => !w.onDone);
    for (const w of free) this.retire(w);
    await Promise.all(free.map((w) => w.proc.exited));
  }

  private spawn(env: NodeJS.ProcessEnv, key: string): WarmWorker {
    const proc = startWorkerProcess('--warm', { ...env }, { ipc: true, nice: this.opts.nice });
    let readyResolve!: (ok: boolean) => void;
    const worker: WarmWorker = { proc, key, runs: 0, ready: new Promise((r) => (readyResolve = r)), onDone: null, idleTimer: null };
    this.live.add(worker);
    proc.child.on('message', (msg: WarmReply) => {
      if ('ready' in msg) readyResolve(true);
      else if ('done' in msg) worker.onDone?.(msg.code);
    });
    void proc.exited.then(() => {
      readyResolve(false);
      this.live.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      if (worker.idleTimer) clearTimeout(worker.idleTimer);
    });
    return worker;
  }

  private assign(worker: WarmWorker, runDir: string): WorkerHandle {
    const { proc } = worker;
    worker.runs++;
    let ended = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveRun) => {
      // The run ends with the worker's `done`, or with the process if it dies (or is stopped) first.
      const finish = (code: number) => {
        if (worker.onDone !== finish) return;
        worker.onDone = null;
        ended = true;
        resolveRun({ code, signal: null });
        this.release(worker);
      };
      worker.onDone = finish;
      void proc.exited.then((e) => {
        if (worker.onDone !== finish) return;
        worker.onDone = null;
        ended = true;
        resolveRun(e);
      });
    });
    void worker.ready.then((ok) => {
      // A worker that died a moment ago can still look connected: the hand-off then fails on its closed
      // channel (EPIPE). Without a callback that error would be thrown in the daemon; with it, the worker is
      // killed (it may be half alive) and its exit ends the run, as any worker's death does.
      if (ok && proc.child.connected) {
        proc.child.send({ run: runDir } satisfies WarmRequest, (err) => {
          if (err) proc.kill();
        });
      }
    });
    return {
      pid: proc.pid,
      child: proc.child,
      exited,
      // Once this run is over the process may be on another run: a late stop or kill must not reach it.
      stop: () => ended || proc.stop(),
      kill: () => ended || proc.kill(),
      stderrTail: proc.stderrTail,
      detach: () => {
        // The worker finishes this run, sees its channel closed and exits; the next daemon adopts the run by pid.
        if (proc.child.connected) proc.child.disconnect();
        proc.child.unref();
        proc.child.stderr?.destroy();
      },
    };
  }

  /** A worker whose run ended: kept warm for IDLE_MS if there is room, for BURST_IDLE_MS beyond `warm`. */
  private release(worker: WarmWorker): void {
    const max = this.opts.maxRuns ?? MAX_RUNS;
    if (this.stopped || !worker.proc.child.connected || worker.runs >= max) return this.retire(worker);
    const idleMs = this.idle.length < this.opts.warm ? (this.opts.idleMs ?? IDLE_MS) : (this.opts.burstIdleMs ?? BURST_IDLE_MS);
    worker.idleTimer = setTimeout(() => {
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      this.retire(worker);
    }, idleMs);
    worker.idleTimer.unref();
    this.idle.push(worker);
  }

  private retire(worker: WarmWorker): void {
    if (worker.idleTimer) clearTimeout(worker.idleTimer);
    worker.idleTimer = null;
    // SIGTERM: an idle warm worker exits at once.
    worker.proc.stop();
  }
}
