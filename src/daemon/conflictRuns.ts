/**
 * Conflict runs of the merge trains (mergeCoordinator.ts): a car that
 * conflicted gets a conflict run, opened one at a time in its project (the
 * slot is taken as the start begins, so two projects never both take the last
 * free slot; Orchestrator.startConflictRun). One found while every slot is busy
 * waits for a slot and is not merged again meanwhile (each try cost a merge
 * and its abort, and said merge.conflict again); the orchestrator claims no
 * new work while one waits. Too many conflict runs, or an on:conflict hook
 * that asks for a person, send the task to needs_attention. Merge checks (mergeQueue.ts) are opened the same way.
 */
import { coerceError } from '../core/errors.js';
import { MERGE_CONFLICT_PREFIX } from '../core/mergeConflictWays.js';
import type { Task } from '../core/types.js';
import { mergeChecked, nextCheck } from '../core/reviewed.js';
import { oneAtATime } from '../lib/oneAtATime.js';
import type { TransitionFields } from '../store/ops/transitionTask.js';
import { MAX_CHECK_ROUNDS, MAX_SAME_BASE_CHECKS, movedTooOften, recheckedTooOften } from './mergeQueue.js';
import type { Store } from '../store/store.js';

/** Conflict runs a task may get before a person must merge it. */
export const MAX_CONFLICT_RUNS = 2;

/** The runs a merge train opens: a conflict run, or a merge check (mergeQueue.ts). */
export type MergeRunKind = 'conflict' | 'merge_check';

export class ConflictRuns {
  /**
   * By project, the conflict run being opened (each step never rejects). Not one turn for all: a start syncs its
   * project's clone, and a remote that falls silent there would hold every project's conflict runs.
   */
  private readonly inTurn = oneAtATime();
  /**
   * Tasks whose conflict (or merge check) waits for its run to start, with the run each waits for, and whether this
   * wait was said (`merge.waiting`: every run slot was taken) yet.
   */
  private readonly awaiting = new Map<string, { kind: MergeRunKind; said: boolean }>();

  constructor(
    private readonly store: Store,
    private readonly opts: {
      /** This daemon (--name), as its `merge.waiting` events name it. */
      owner: string;
      /** The on:conflict hook, if any: 'manual' asks a person instead of a conflict run. */
      onConflict: (task: Task, files: string[]) => Promise<'auto' | 'manual'> | undefined;
      /** Starts a conflict run (or a merge check) for the task; returns false when no slot is free. */
      startConflictRun: (task: Task, kind: MergeRunKind) => Promise<boolean>;
      toAttention: (task: Task, reason: string, fields?: TransitionFields) => Promise<void>;
      /** The project's base branch, as a person reads it. */
      baseOf: (task: Task) => Promise<string>;
      onChange: () => void;
      onError: (err: Error) => void;
    },
  ) {}

  /** Conflict runs waiting for a free slot. */
  get waiting(): number {
    return this.awaiting.size;
  }

  isWaiting(taskId: string): boolean {
    return this.awaiting.has(taskId);
  }

  /** The run the task waits for a slot for, if it does. */
  waitingFor(taskId: string): MergeRunKind | undefined {
    return this.awaiting.get(taskId)?.kind;
  }

  /** A car conflicted: its conflict run starts now, or once a slot is free; or a person is asked. */
  open(task: Task, message: string, files: string[]): Promise<void> {
    return this.inTurn(task.projectId, () => this.openNow(task, message, files));
  }

  /**
   * A car must have the checks run on its merge with main (`head`) first (mergeQueue.ts): its merge check starts now, or
   * once a slot is free; or, when main moved under each of the last MAX_CHECK_ROUNDS checks, a person is asked. A batch
   * checked again on the same main (a rider retried, cancelled or moved: mergeBatch.ts) is no new round (nextCheck).
   */
  openCheck(task: Task, head: string): Promise<void> {
    return this.inTurn(task.projectId, async () => {
      try {
        const checked = mergeChecked(task);
        const next = nextCheck(task, head);
        if (checked && next.round > MAX_CHECK_ROUNDS) {
          // Counted afresh after the person's retry: the rounds start over.
          const result = { ...(task.result ?? {}), mergeChecked: { ...(task.result?.mergeChecked as object), rounds: 0 } };
          return await this.opts.toAttention(task, movedTooOften(task, await this.opts.baseOf(task), checked.rounds), { result });
        }
        if (checked && next.rechecks >= MAX_SAME_BASE_CHECKS) {
          const result = { ...(task.result ?? {}), mergeChecked: { ...(task.result?.mergeChecked as object), rounds: 0, rechecks: 0 } };
          return await this.opts.toAttention(task, recheckedTooOften(task, await this.opts.baseOf(task), checked.rechecks + 1), { result });
        }
        this.awaiting.set(task.id, { kind: 'merge_check', said: false });
        await this.start(task);
      } catch (err) {
        this.opts.onError(coerceError(err));
      }
    });
  }

  /** Starts the conflict runs that waited for a slot, for the tasks still merging (one cancelled meanwhile is let go). */
  async openWaiting(): Promise<void> {
    await Promise.all(
      [...this.awaiting.keys()].map(async (id) => {
        const task = await this.store.tasks.row(id).catch(() => null);
        if (task?.status !== 'merging') this.awaiting.delete(id);
        else await this.inTurn(task.projectId, () => (this.awaiting.has(id) ? this.start(task) : Promise.resolve()));
      }),
    );
  }

  private async openNow(task: Task, message: string, files: string[]): Promise<void> {
    try {
      const conflicts = (await this.store.runs.list({ taskId: task.id })).filter((r) => r.kind === 'conflict').length;
      // Said as MERGE_CONFLICT: the task detail then names the ways out (core/mergeConflictWays.ts), which a plain retry is not.
      if (conflicts >= MAX_CONFLICT_RUNS) return await this.opts.toAttention(task, `${MERGE_CONFLICT_PREFIX} still conflicts after ${conflicts} conflict runs: ${message}`);
      const mode = (await this.opts.onConflict(task, files)) ?? 'auto';
      if (mode === 'manual') return await this.opts.toAttention(task, `${MERGE_CONFLICT_PREFIX} the on:conflict hook asks for a person: ${message}`);
      this.awaiting.set(task.id, { kind: 'conflict', said: false });
      await this.start(task);
    } catch (err) {
      this.opts.onError(coerceError(err));
    }
  }

  /** The conflict run of a task waiting for one, if a slot is free; it waits on otherwise, and says so once. */
  private async start(task: Task): Promise<void> {
    const wait = this.awaiting.get(task.id) ?? { kind: 'conflict', said: false };
    try {
      if (!(await this.opts.startConflictRun(task, wait.kind))) return await this.sayWaiting(task, wait);
      this.awaiting.delete(task.id);
      this.opts.onChange();
    } catch (err) {
      // The run could not start (its worker, a hook): the next merge of the task tries again.
      this.awaiting.delete(task.id);
      this.opts.onError(coerceError(err));
    }
  }

  /**
   * Says, once per wait, that the run waits for a slot: the board tells a check whose run is being started from one
   * that waits (store/ops/mergeCheckAtWork.ts). No status changes. A write that fails is tried at the next try to
   * start, and never ends the wait.
   */
  private async sayWaiting(task: Task, wait: { kind: MergeRunKind; said: boolean }): Promise<void> {
    if (wait.said) return;
    try {
      await this.store.events.append({ projectId: task.projectId, taskId: task.id, type: 'merge.waiting', payload: { kind: wait.kind, owner: this.opts.owner } });
      wait.said = true;
    } catch (err) {
      this.opts.onError(coerceError(err));
    }
  }
}
