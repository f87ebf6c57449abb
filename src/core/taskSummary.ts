/**
 * The slim task the board lists (`GET /api/tasks?view=board`): what a card,
 * the lane counts and the dependency graph read, without plans, specs,
 * results or approvals. A thousand of these are a fraction of the full rows.
 */
import type { Task } from './types.js';

export const TASK_SUMMARY_FIELDS = ['id', 'projectId', 'parentId', 'title', 'status', 'priority', 'complexity', 'version', 'deps', 'createdAt', 'updatedAt'] as const;

/**
 * What a task's merge check is doing (store/ops/mergeCheckAtWork.ts): its run at work (`running`); or, opened by a
 * train with no run yet, its run being started on a free slot (`starting`), waiting for a worker because every run
 * slot of its daemon is taken (`waiting`), or owed by a daemon that is no longer alive (`ownerGone`: the next merge
 * pass of a live daemon takes it over).
 */
export const MERGE_CHECK_STATES = ['running', 'starting', 'waiting', 'ownerGone'] as const;
export type MergeCheckState = (typeof MERGE_CHECK_STATES)[number];

/**
 * A merge check on a task in merging (daemon/mergeQueue.ts), as its card says it: which round of at most how many
 * (null when its opening event is not found), and what it is doing. The task detail's `mergeCheck` says more (the
 * check, the daemon).
 */
export interface CardMergeCheck {
  round: number | null;
  maxRounds: number | null;
  state: MergeCheckState;
}

/**
 * A task in merging waiting for its turn (daemon/mergeQueue.ts runs one merge check at a time): the task whose merge
 * check runs now, which lands first.
 */
export interface CardMergeTurn {
  behind: { id: string; title: string };
  /** Set when this task is checked together with it (daemon/mergeBatch.ts): how many changes that check holds. */
  together?: number;
}

export interface TaskSummary extends Pick<Task, (typeof TASK_SUMMARY_FIELDS)[number]> {
  /** Set while the task is in merging and its merge check runs or was opened; null (or absent, for a row read before) otherwise. */
  mergeCheck?: CardMergeCheck | null | undefined;
  /** Set while the task is in merging behind another task's merge check; null (or absent) otherwise. */
  mergeTurn?: CardMergeTurn | null | undefined;
}

export function summarizeTask(t: Task, mergeCheck: CardMergeCheck | null = null, mergeTurn: CardMergeTurn | null = null): TaskSummary {
  return { id: t.id, projectId: t.projectId, parentId: t.parentId, title: t.title, status: t.status, priority: t.priority, complexity: t.complexity, version: t.version, deps: t.deps, createdAt: t.createdAt, updatedAt: t.updatedAt, mergeCheck, mergeTurn };
}
