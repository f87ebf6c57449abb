/**
 * WorkerManager: the worker processes of this daemon's runs. It spawns a
 * worker on a run directory, knows which are alive (its own children, or —
 * after a daemon restart — adopted ones found by pid), and stops them: SIGTERM
 * first (a worker finishes its current record), SIGKILL after the grace period.
 * Runs go to warm workers from a WorkerPool when `warm` > 0 (workerPool.ts
 * gives the crash-safety contract they keep).
 */
import type { Run } from '../core/types.js';
import { removeRunScratch } from '../executor/agentRunFolder.js';
import type { WorkerHandle } from '../executor/spawn.js';
import { WorkerPool } from '../executor/workerPool.js';
import { isPidAlive } from '../lib/processes.js';

export class WorkerManager {
  private readonly handles = new Map<string, WorkerHandle>();
  private readonly exited = new Set<string>();
  /** Runs whose task waits for a person's answer, as the orchestrator's last reconcile saw them. */
  private asking = new Set<string>();

  private readonly pool: WorkerPool;

  constructor(private readonly opts: { onExit: (runId: string, code: number | null, signal: string | null) => void; warm?: number; nice?: number }) {
    this.pool = new WorkerPool({ warm: opts.warm ?? 0, nice: opts.nice });
  }

  start(): void {
    this.pool.start();
  }

  /** Starts warm workers for runs about to start with these environments (WorkerPool.prestart). */
  prestart(envs: NodeJS.ProcessEnv[]): void {
    this.pool.prestart(envs);
  }

  /** `env` is the worker's whole environment (the orchestrator allowlists it). */
  spawn(runId: string, runDir: string, env: NodeJS.ProcessEnv): WorkerHandle {
    const handle = this.pool.run(runDir, env);
    this.handles.set(runId, handle);
    this.exited.delete(runId);
    void handle.exited.then(({ code, signal }) => {
      this.exited.add(runId);
      this.handles.delete(runId);
      this.opts.onExit(runId, code, signal);
    });
    return handle;
  }

  /** Whether this manager started the run's worker (or took it over by pid: false then). */
  started(runId: string): boolean {
    return this.handles.has(runId) || this.exited.has(runId);
  }

  /** Alive: a child of ours that has not exited, or an adopted worker whose pid still runs. */
  isAlive(runId: string, pid: number | null): boolean {
    if (this.handles.has(runId)) return true;
    if (this.exited.has(runId)) return false;
    return pid !== null && isPidAlive(pid);
  }

  /** The runs now waiting for a person's answer (the orchestrator tells each tick). */
  waitingForAnswer(runIds: Iterable<string>): void {
    this.asking = new Set(runIds);
  }

  /**
   * Runs that hold one of the maxConcurrentRuns slots: every run of this daemon's workers except those
   * waiting for a person's answer, whose idle worker costs nothing while the person thinks (with one
   * slot, a task asking a question used to hold every other task back until it was answered).
   */
  get slotsInUse(): number {
    let asking = 0;
    for (const id of this.asking) if (this.handles.has(id)) asking++;
    return this.handles.size - asking;
  }

  get running(): number {
    return this.handles.size;
  }

  runIds(): string[] {
    return [...this.handles.keys()];
  }

  /**
   * SIGKILL to the run's worker (its task cancelled, or the worker silent). A worker killed mid-call cannot remove
   * its agent's scratch folders (agentRunFolder.ts): they go here, once it has exited.
   */
  kill(run: Pick<Run, 'id' | 'workerPid' | 'runDir'>): void {
    const scratch = () => {
      try {
        if (run.runDir) removeRunScratch(run.runDir);
      } catch {
        // Left for the run's next call, which removes what no call of its own is using.
      }
    };
    const handle = this.handles.get(run.id);
    const pid = run.workerPid;
    if (handle) {
      handle.kill();
      void handle.exited.then(scratch);
    }
    // Its run over, a warm worker's pid may already be on another run: never signal it for this one.
    else if (this.exited.has(run.id)) return;
    else if (pid !== null) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      scratch();
    }
  }

  /** SIGTERM to every worker, then SIGKILL to those still running after `graceMs`. */
  async stopAll(graceMs: number): Promise<void> {
    const all = [...this.handles.values()];
    for (const h of all) h.stop();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(all.map((h) => h.exited)), timeout]);
    clearTimeout(timer);
    for (const h of all) h.kill();
    await Promise.all(all.map((h) => h.exited));
    await this.pool.stop();
  }

  /** Leaves the workers on a run running (a daemon killed or restarted adopts them later); idle ones end. */
  async detachAll(): Promise<void> {
    for (const h of this.handles.values()) h.detach();
    await this.pool.stop();
  }
}
