/**
 * The merge check at work in a project (daemon/mergeQueue.ts runs one merge check at a time): the task in merging whose
 * merge_check run is running, with its title, so a task waiting behind it can say whose turn it is. One read through
 * indexes: the project's tasks in merging (tasks_project_status), then their runs (runs_task); null when none runs.
 */
import type { Queryable } from '../db.js';

export interface MergeCheckAtWork {
  taskId: string;
  title: string;
  runId: string;
}

export async function mergeCheckAtWork(db: Queryable, projectId: string): Promise<MergeCheckAtWork | null> {
  const row = await db.one<{ task_id: string; title: string; run_id: string }>(
    `SELECT t.id AS task_id, t.title, r.id AS run_id FROM tasks t JOIN runs r ON r.task_id = t.id
     WHERE t.project_id = $1 AND t.status = 'merging' AND r.status = 'running' AND r.kind = 'merge_check'
     ORDER BY r.started_at, r.id LIMIT 1`,
    [projectId],
  );
  return row ? { taskId: row.task_id, title: row.title, runId: row.run_id } : null;
}
