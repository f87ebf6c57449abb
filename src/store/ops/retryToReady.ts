/**
 * A plain retry (the Store's tasks.retry when no other way applies): the task back to ready, its backoff
 * baseline reset. The caller appends the status event, with the reason answered here, in the same transaction.
 *
 * A task stopped while its plan waited at plan review (cancelled there, or parked in needs_attention: its newest
 * status event left plan_review) had a plan nobody approved. In ready with that plan kept, the next claim executed
 * it (daemon/jobs.ts runKindFor: a queued task with a plan executes) and the plan review gate was never asked (a
 * new-user trial on the board, 2026-12). Its plan and proposal are cleared: it is planned again and waits for a
 * person again. A plan a person approved, or one given when the task was created, is kept.
 */
import type { TaskStatus } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { transitionTask } from './transitionTask.js';

export async function stoppedAtPlanReview(q: Queryable, id: string): Promise<boolean> {
  const last = await q.one<{ payload: string }>(`SELECT payload FROM events WHERE task_id = $1 AND type = 'task.status' ORDER BY id DESC LIMIT 1`, [id]);
  return last ? (JSON.parse(last.payload) as { from?: unknown }).from === 'plan_review' : false;
}

export async function retryToReady(q: Queryable, opts: { id: string; from: TaskStatus; now: number }): Promise<{ before: Task; after: Task; reason: string }> {
  const replan = await stoppedAtPlanReview(q, opts.id);
  const { before, after } = await transitionTask(q, { id: opts.id, to: 'ready', from: opts.from, fields: { nextEligibleAt: null, ...(replan ? { plan: null, result: null } : {}) }, now: opts.now });
  await q.run(`UPDATE tasks SET retry_baseline = attempt WHERE id = $1`, [opts.id]);
  return { before, after, reason: replan ? 'retry: its plan was never approved, so it is planned again' : 'retry' };
}
