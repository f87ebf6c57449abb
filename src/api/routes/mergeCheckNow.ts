/**
 * A task in `merging` whose merge check run is at work (daemon/mergeQueue.ts) looks stuck on the board: nothing says
 * main is being merged into its branch and the project's checks run on that. This reads what the run is doing from its
 * newest phase (the merge, or `check:<name>`) and the round from the `merge.check` event that opened it.
 */
import type { CardMergeCheck } from '../../core/taskSummary.js';
import type { Run, Task } from '../../core/types.js';
import type { Store } from '../../store/store.js';
import type { TaskDetail } from '../wire/responses.js';

export async function mergeCheckNow(store: Store, task: Task, runs: readonly Run[]): Promise<TaskDetail['mergeCheck']> {
  if (task.status !== 'merging') return null;
  const run = runs.find((r) => r.kind === 'merge_check' && r.status === 'running');
  if (!run) return null;
  const [phase] = (await store.events.list({ runId: run.id, type: 'run.phase', order: 'newest', limit: 1 })).events;
  const [opened] = (await store.events.list({ taskId: task.id, type: 'merge.check', order: 'newest', limit: 1 })).events;
  const stage = typeof phase?.payload.stage === 'string' ? phase.payload.stage : '';
  const count = (v: unknown) => (typeof v === 'number' ? v : null);
  return { runId: run.id, daemon: run.owner, check: stage.startsWith('check:') ? stage.slice('check:'.length) : null, round: count(opened?.payload.round), maxRounds: count(opened?.payload.maxRounds) };
}

/**
 * For the board's cards: the merge check at work on each task in merging among `tasks`, by task id (its round). Two
 * reads per such task (its running runs, its newest merge.check event); none for a page with no task in merging.
 */
export async function mergeChecksOf(store: Store, tasks: readonly Task[]): Promise<Map<string, CardMergeCheck>> {
  const checks = new Map<string, CardMergeCheck>();
  for (const task of tasks.filter((t) => t.status === 'merging')) {
    const now = await mergeCheckNow(store, task, await store.runs.list({ taskId: task.id, status: 'running' }));
    if (now) checks.set(task.id, { round: now.round, maxRounds: now.maxRounds });
  }
  return checks;
}
