/**
 * A merge check of several changes together failed (daemon/mergeBatch.ts): each of them is checked alone from now on
 * (result.mergeAlone, the commit approved then: core/reviewed.ts mergeAlone), so the change that breaks the checks is
 * found by its own check. Called in the transaction that applies the check run's outcome (daemon/outcomes.ts), for the
 * riders (the leader's own result is set there); a rider no longer merging is left alone.
 */
import { approvedCommit } from '../../core/reviewed.js';
import type { Queryable } from '../db.js';
import { appendEvent } from './events.js';
import { taskRow } from './getTask.js';

export async function markMergeAlone(q: Queryable, opts: { taskIds: string[]; leader: { id: string; title: string }; check: string; now: number }): Promise<void> {
  for (const id of opts.taskIds) {
    const task = await taskRow(q, id).catch(() => null);
    const approved = task && approvedCommit(task);
    if (!task || task.status !== 'merging' || !approved) continue;
    await q.run(`UPDATE tasks SET result = $1, updated_at = $2 WHERE id = $3 AND status = 'merging'`, [JSON.stringify({ ...(task.result ?? {}), mergeAlone: approved }), opts.now, id]);
    await appendEvent(q, { projectId: task.projectId, taskId: id, type: 'merge.check_alone', payload: { leader: opts.leader, check: opts.check } }, opts.now);
  }
}
