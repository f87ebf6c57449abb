/**
 * The merge check at work in a project (daemon/mergeQueue.ts runs one merge check at a time): the task in merging whose
 * merge_check run is running, with its title, so a task waiting behind it can say whose turn it is. Else the one whose
 * check the train opened but whose run has not started (`runId` null): every run slot of the daemon that owes it is
 * taken (daemon/conflictRuns.ts), and it starts when one is free. The task's events say it, as conflictHeldElsewhere
 * (daemons.ts) reads them: its newest `merge.check`, naming that daemon, and no `run.started` or status change after it.
 * Reads through indexes: the project's tasks in merging (tasks_project_status), then their runs (runs_task) or their
 * events; null when no check runs or waits.
 */
import type { Queryable } from '../db.js';

export interface MergeCheckAtWork {
  taskId: string;
  title: string;
  /** The running merge_check run; null while the check waits for a run slot. */
  runId: string | null;
  /** The daemon that owes a waiting check (its `merge.check` event's owner); null for a running one (its run says). */
  waitingOn: string | null;
}

export async function mergeCheckAtWork(db: Queryable, projectId: string): Promise<MergeCheckAtWork | null> {
  const row = await db.one<{ task_id: string; title: string; run_id: string }>(
    `SELECT t.id AS task_id, t.title, r.id AS run_id FROM tasks t JOIN runs r ON r.task_id = t.id
     WHERE t.project_id = $1 AND t.status = 'merging' AND r.status = 'running' AND r.kind = 'merge_check'
     ORDER BY r.started_at, r.id LIMIT 1`,
    [projectId],
  );
  if (row) return { taskId: row.task_id, title: row.title, runId: row.run_id, waitingOn: null };
  const waiting = await db.one<{ task_id: string; title: string; payload: string }>(
    `SELECT t.id AS task_id, t.title, e.payload FROM tasks t JOIN events e ON e.task_id = t.id AND e.type = 'merge.check'
     WHERE t.project_id = $1 AND t.status = 'merging'
       AND e.id = (SELECT MAX(l.id) FROM events l WHERE l.task_id = t.id AND l.type IN ('merge.check', 'merge.conflict'))
       AND NOT EXISTS (SELECT 1 FROM events a WHERE a.task_id = t.id AND a.type IN ('run.started', 'task.status') AND a.id > e.id)
     ORDER BY e.id LIMIT 1`,
    [projectId],
  );
  if (!waiting) return null;
  const owner = (JSON.parse(waiting.payload) as { owner?: unknown }).owner;
  return { taskId: waiting.task_id, title: waiting.title, runId: null, waitingOn: typeof owner === 'string' ? owner : null };
}
