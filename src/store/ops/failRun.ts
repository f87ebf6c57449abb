/**
 * A run the daemon gives up on (its worker went silent or died too often):
 * the run ends as failed and its task goes back to ready with a backoff (when
 * the daemon still holds the claim) or, at merge time, to needs_attention.
 * Run it inside one transaction: a crash leaves the run and its task as they
 * were, and the next tick tries again.
 */
import { MaestroError } from '../../core/errors.js';
import type { Run, Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { failClaim } from './claim.js';
import { appendEvent } from './events.js';
import { getTask } from './getTask.js';
import { finishRun } from './runs.js';
import { transitionTask } from './transitionTask.js';

export interface FailRunOptions {
  run: Pick<Run, 'id'>;
  /** The task as the caller saw it: its claim (owner, attempt) is the fence. */
  task: Pick<Task, 'id' | 'attempt' | 'claimedBy' | 'status'>;
  owner: string;
  error: string;
  /** The backoff after this many failed runs of the task. */
  backoffMs: (failures: number) => number;
  now: number;
}

export async function failRunAndTask(q: Queryable, o: FailRunOptions): Promise<void> {
  try {
    await finishRun(q, { id: o.run.id, status: 'failed', error: o.error, now: o.now });
  } catch (err) {
    // Already ended (its final record arrived first): the task is still given back below.
    if (!(err instanceof MaestroError) || err.code !== 'ILLEGAL_TRANSITION') throw err;
  }
  const failures = await q.one<{ n: number }>(`SELECT COUNT(*) AS n FROM runs WHERE task_id = $1 AND status = 'failed'`, [o.task.id]);
  const before = await getTask(q, o.task.id);
  if (o.task.claimedBy === o.owner) {
    const backoffMs = o.backoffMs(Number(failures?.n ?? 1));
    const won = await failClaim(q, { id: o.task.id, owner: o.owner, attempt: o.task.attempt, now: o.now, error: o.error, backoffMs });
    if (won) await appendEvent(q, { projectId: before.projectId, taskId: before.id, type: 'task.status', payload: { from: before.status, to: 'ready', error: o.error, backoffMs } }, o.now);
  } else if (o.task.status === 'merging') {
    const { after } = await transitionTask(q, { id: o.task.id, from: 'merging', to: 'needs_attention', fields: { lastRunError: o.error }, now: o.now });
    await appendEvent(q, { projectId: after.projectId, taskId: after.id, type: 'task.status', payload: { from: 'merging', to: after.status } }, o.now);
  }
}
