/**
 * A passed merge check that no clone can land any more (daemon/mergeCars.ts): its commit was never pushed, and the
 * train that reached the task runs in a clone without it. The check is forgotten (result.mergeChecked removed), so
 * the approved commit is the change again and the train checks its merge with main anew; nothing unchecked lands.
 * Only while the task is merging on that very check: a task moved on, or checked again meanwhile, is left alone.
 */
import { mergeChecked } from '../../core/reviewed.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { appendEvent } from './events.js';
import { taskRow } from './getTask.js';

export async function forgetMergeCheck(q: Queryable, opts: { id: string; commitSha: string; reason: string; now: number }): Promise<Task | null> {
  const task = await taskRow(q, opts.id);
  const checked = mergeChecked(task);
  if (task.status !== 'merging' || checked?.commitSha !== opts.commitSha) return null;
  const { mergeChecked: _lost, ...result } = task.result ?? {};
  await q.run(`UPDATE tasks SET result = $1, updated_at = $2 WHERE id = $3 AND status = 'merging'`, [JSON.stringify(result), opts.now, task.id]);
  await appendEvent(q, { projectId: task.projectId, taskId: task.id, type: 'merge.check_lost', payload: { commit: checked.commitSha, approved: checked.approved, reason: opts.reason } }, opts.now);
  return taskRow(q, task.id);
}
