/**
 * The next version of a task (version + 1, parentVersionId the old one), back in ready with a clean slate: no
 * claim, no result, no attempts; what the old version's dependents and subtasks pointed at moves to it, each
 * with a task.edited event. Its feedback comes twice: in English for the agent's prompt, and as data (feedbackSource)
 * for a reader to say in its own language. A person's rejection at a gate makes one (gates.ts), and so does a retry from the current main (freshVersion.ts).
 * The caller moves the old version to superseded in the same transaction.
 */
import type { FeedbackSource } from '../../core/feedbackSource.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { INSERT_TASK_SQL, newId, taskValues } from '../rows.js';
import { appendEvent } from './events.js';
import { getTask } from './getTask.js';

export async function insertNextVersion(db: Queryable, task: Task, opts: { plan: string | null; feedback: string; feedbackSource: FeedbackSource; now: number }): Promise<Task> {
  const next: Task = {
    ...task,
    id: newId('t'),
    status: 'ready',
    approvals: [],
    plan: opts.plan,
    result: null,
    feedback: opts.feedback,
    feedbackSource: opts.feedbackSource,
    parentVersionId: task.id,
    version: task.version + 1,
    claimedAt: null,
    claimedBy: null,
    leaseExpiresAt: null,
    attempt: 0,
    retryBaseline: 0,
    nextEligibleAt: null,
    lastRunError: null,
    createdAt: opts.now,
    updatedAt: opts.now,
  };
  await db.run(INSERT_TASK_SQL, taskValues(next));
  const dependents = await db.all<{ id: string; deps: string }>(`SELECT id, deps FROM tasks WHERE project_id = $1 AND id <> $2`, [task.projectId, next.id]);
  // Each task moved says so (task.edited, in this transaction): boards, watchers and other daemons read it again.
  const moved = (id: string, field: 'deps' | 'parentId') => appendEvent(db, { projectId: task.projectId, taskId: id, type: 'task.edited', payload: { fields: [field], nextVersion: next.id } }, opts.now);
  for (const d of dependents) {
    const deps = JSON.parse(d.deps) as string[];
    if (!deps.includes(task.id)) continue;
    await db.run(`UPDATE tasks SET deps = $1, updated_at = $2 WHERE id = $3`, [JSON.stringify(deps.map((x) => (x === task.id ? next.id : x))), opts.now, d.id]);
    await moved(d.id, 'deps');
  }
  const children = await db.all<{ id: string }>(`UPDATE tasks SET parent_id = $1, updated_at = $2 WHERE parent_id = $3 RETURNING id`, [next.id, opts.now, task.id]);
  for (const c of children) await moved(c.id, 'parentId');
  return getTask(db, next.id);
}
