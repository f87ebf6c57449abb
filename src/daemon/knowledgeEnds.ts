/**
 * KnowledgeEnds: the knowledge end of each task's last run on this daemon (runAftermath.ts knowledgeFinished: the
 * run's candidates scored, its agent report staged as pending candidates in the task's knowledge session, its
 * sealed ledger stored; in a demo, its accepted decisions promoted), kept while it goes on. The task's next run
 * waits for it (RunStarter.create) before anything of that run reads or writes the session. Started beside it, as
 * the ingestor kicks the tick the moment a run ends, the review after an execute was briefed from the session as it
 * stood before that end (the execute's candidates unsealed; a demo's decision still pending and not cited), and its
 * onRunStarted wrote the session while the end was writing it, its start then settling the other's writes
 * synchronously on the loop (~430 ms over bench:daemon's runs; NOTE51 §7.2).
 *
 * Per task: other tasks' runs never wait. An end that fails counts as settled (knowledge never fails a run:
 * tryKnowledge). A stop ends the waits: the start gives up and its task is handed over between stages
 * (handOver.ts); a stop's own wait for the ends is the Ingestor's. After a restart nothing is pending (an adopted
 * run's end comes when its final record is read here).
 */
import type { Run } from '../core/types.js';
import { SECOND } from './orchestratorOptions.js';

/** A start that waits longer than this for the end says so in the log, once. */
export const KNOWLEDGE_END_SLOW_MS = 5 * SECOND;

interface PendingEnd {
  runId: string;
  settled: Promise<void>;
}

export class KnowledgeEnds {
  /** By task: its last run's end, until it settles. */
  private readonly pending = new Map<string, PendingEnd>();
  private halt = new AbortController();

  constructor(private readonly opts: { log?: { info(obj: Record<string, unknown>, msg: string): void }; slowMs?: number }) {}

  /** Keeps the run's knowledge end until it settles, however it settles; returns `end`. */
  add<T>(run: Pick<Run, 'id' | 'taskId'>, end: Promise<T>): Promise<T> {
    const entry: PendingEnd = { runId: run.id, settled: end.then(() => undefined, () => undefined) };
    this.pending.set(run.taskId, entry);
    void entry.settled.then(() => {
      if (this.pending.get(run.taskId) === entry) this.pending.delete(run.taskId);
    });
    return end;
  }

  /** True once the knowledge end pending for the task (if any) has settled; false when the daemon stops first. */
  async settled(taskId: string): Promise<boolean> {
    const entry = this.pending.get(taskId);
    if (!entry) return true;
    const { signal } = this.halt;
    if (signal.aborted) return false;
    const since = Date.now();
    // One line, not one per tick: a person who wonders why a run is slow to start reads what it waits for.
    const slow = setTimeout(
      () => this.opts.log?.info({ taskId, runId: entry.runId, waitedMs: Date.now() - since }, "a run of the task waits to start until its previous run's knowledge is finished (its report staged, its ledger stored)"),
      this.opts.slowMs ?? KNOWLEDGE_END_SLOW_MS,
    );
    let onStop = () => {};
    try {
      return await Promise.race([entry.settled.then(() => true), new Promise<boolean>((resolve) => signal.addEventListener('abort', (onStop = () => resolve(false)), { once: true }))]);
    } finally {
      clearTimeout(slow);
      signal.removeEventListener('abort', onStop);
    }
  }

  start(): void {
    if (this.halt.signal.aborted) this.halt = new AbortController();
  }

  /** Ends the starts' waits (the ends themselves go on: the Ingestor's stop waits for them). */
  stop(): void {
    this.halt.abort();
  }
}
