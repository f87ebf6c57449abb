/**
 * The merge check at work in a project (daemon/mergeQueue.ts runs one merge check at a time): the task in merging whose
 * merge_check run is running, with its title, so a task waiting behind it can say whose turn it is. Else the one whose
 * check the train opened but whose run has not started (`runId` null). The task's events say it, as conflictHeldElsewhere
 * (daemons.ts) reads them: its newest `merge.check`, naming the daemon that owes the run, and no `run.started` or status
 * change after it. Such a check is one of three (`state`):
 * - `starting`: nothing said since; a run slot was free and its run is being started (its clone synced, its job written);
 * - `waiting`: a `merge.waiting` after it: that daemon found every run slot taken (daemon/conflictRuns.ts), and it
 *   starts when one is free;
 * - `ownerGone`: that daemon is not alive (daemonAlive: stopped, or no heartbeat within `staleMs`): nobody will start
 *   it there, and the next merge pass of a live daemon takes the check over.
 * Reads through indexes: the project's tasks in merging (tasks_project_status), then their runs (runs_task) or their
 * events (events_task), and for a check with no run the daemon by name; null when no check runs or waits.
 */
import type { MergeCheckState } from '../../core/taskSummary.js';
import type { Queryable } from '../db.js';
import { daemonAlive } from './daemons.js';

export interface MergeCheckAtWork {
  taskId: string;
  title: string;
  /** The running merge_check run; null while the check has no run yet. */
  runId: string | null;
  /** The daemon that owes a check with no run yet (its `merge.check` event's owner); null for a running one (its run says). */
  owner: string | null;
  state: MergeCheckState;
}

/** `liveness`: the registry's clock now, and how long a daemon stays alive without a heartbeat (daemonAlive). */
export async function mergeCheckAtWork(db: Queryable, projectId: string, liveness: { now: number; staleMs: number }): Promise<MergeCheckAtWork | null> {
  const row = await db.one<{ task_id: string; title: string; run_id: string }>(
    `SELECT t.id AS task_id, t.title, r.id AS run_id FROM tasks t JOIN runs r ON r.task_id = t.id
     WHERE t.project_id = $1 AND t.status = 'merging' AND r.status = 'running' AND r.kind = 'merge_check'
     ORDER BY r.started_at, r.id LIMIT 1`,
    [projectId],
  );
  if (row) return { taskId: row.task_id, title: row.title, runId: row.run_id, owner: null, state: 'running' };
  const opened = await db.one<{ task_id: string; title: string; payload: string; waiting: number | string }>(
    `SELECT t.id AS task_id, t.title, e.payload,
       CASE WHEN EXISTS (SELECT 1 FROM events w WHERE w.task_id = t.id AND w.type = 'merge.waiting' AND w.id > e.id) THEN 1 ELSE 0 END AS waiting
     FROM tasks t JOIN events e ON e.task_id = t.id AND e.type = 'merge.check'
     WHERE t.project_id = $1 AND t.status = 'merging'
       AND e.id = (SELECT MAX(l.id) FROM events l WHERE l.task_id = t.id AND l.type IN ('merge.check', 'merge.conflict'))
       AND NOT EXISTS (SELECT 1 FROM events a WHERE a.task_id = t.id AND a.type IN ('run.started', 'task.status') AND a.id > e.id)
     ORDER BY e.id LIMIT 1`,
    [projectId],
  );
  if (!opened) return null;
  const named = (JSON.parse(opened.payload) as { owner?: unknown }).owner;
  const owner = typeof named === 'string' ? named : null;
  // A check opened before the events named their daemon: nobody to ask about, so not said to be gone.
  const gone = owner !== null && !(await daemonAlive(db, { name: owner, ...liveness }));
  const state: MergeCheckState = gone ? 'ownerGone' : Number(opened.waiting) ? 'waiting' : 'starting';
  return { taskId: opened.task_id, title: opened.title, runId: null, owner, state };
}
