/**
 * A task with its subtasks: cancelled together, retried together.
 *
 * A person cancels a task, and with it every subtask below it (children by parent_id, their children, …) that is
 * not finished (done, cancelled, superseded). A subtask left going after its parent was cancelled was claimed,
 * reviewed and could merge work nobody wanted any more (a new-user trial, 2026-12). Each move is a guarded
 * transition (ops/transitionTask.ts); the caller runs them, and their events, in one transaction: a crash leaves
 * the whole tree cancelled or none of it. A subtask that moved meanwhile (a worker's step) fails its
 * compare-and-set, which rolls the whole cancel back with ILLEGAL_TRANSITION ("reload and try again").
 * A subtask's running worker is stopped by its daemon's reconcile, as for any cancelled task.
 *
 * A person retries a decomposed parent (cancelled, or parked in needs_attention because a subtask was cancelled,
 * daemon/parentTasks.ts): it goes back to waiting_children and its cancelled subtasks back to ready, while done
 * ones stay done. Ready would not do for the parent: its plan is approved, so a claim would execute the whole plan
 * as one task beside the subtasks that already landed.
 */
import { FINISHED_STATUSES, type TaskStatus } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { listTasks, taskRow } from './getTask.js';
import { transitionTask } from './transitionTask.js';

export interface Moved {
  before: Task;
  after: Task;
}

/** Every task below `id`, parents before their children. A superseded version has none (a reject moves them on). */
export async function descendants(db: Queryable, id: string): Promise<Task[]> {
  const found: Task[] = [];
  let level = [id];
  while (level.length) {
    const next: string[] = [];
    for (const parentId of level) {
      // Whole rows in one read per parent (listTasks), not one read per child.
      for (const child of await listTasks(db, { parentId, limit: 100_000 })) {
        found.push(child);
        next.push(child.id);
      }
    }
    level = next;
  }
  return found;
}

/** The task to cancelled, then its unfinished subtasks; the caller appends an event for each move. */
export async function cancelTask(db: Queryable, opts: { id: string; from?: TaskStatus; now: number }): Promise<{ task: Moved; subtasks: Moved[] }> {
  const task = await transitionTask(db, { id: opts.id, from: opts.from, to: 'cancelled', now: opts.now });
  const subtasks: Moved[] = [];
  for (const child of await descendants(db, opts.id)) {
    if (FINISHED_STATUSES.includes(child.status)) continue;
    subtasks.push(await transitionTask(db, { id: child.id, from: child.status, to: 'cancelled', now: opts.now }));
  }
  return { task, subtasks };
}

/**
 * The decomposed parents whose subtasks are all over (done, cancelled or superseded): what the daemon settles after a
 * merge (daemon/parentTasks.ts). One query however many parents wait: reading each one's subtasks at every merge
 * tick was the daemon's costliest statement in bench:daemon (2,366 reads for 8 demo scenarios).
 */
export async function settledParentIds(db: Queryable): Promise<string[]> {
  const rows = await db.all<{ id: string }>(
    `SELECT p.id FROM tasks p WHERE p.status = 'waiting_children'
       AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_id = p.id AND c.status NOT IN (${FINISHED_STATUSES.map((st) => `'${st}'`).join(', ')}))
     ORDER BY p.created_at, p.id`,
  );
  return rows.map((r) => r.id);
}

/** Whether the task was decomposed: it has a subtask that is not a superseded version. */
export async function hasSubtasks(db: Queryable, id: string): Promise<boolean> {
  return Boolean(await db.one(`SELECT 1 AS one FROM tasks WHERE parent_id = $1 AND status <> 'superseded' LIMIT 1`, [id]));
}

/**
 * A decomposed task back to waiting_children, and every cancelled subtask below it back to ready (or to
 * waiting_children, if it has subtasks of its own), with its backoff baseline reset as a retry does. The caller
 * appends an event for each move, in the same transaction.
 */
export async function retryWithSubtasks(db: Queryable, opts: { id: string; from: TaskStatus; now: number }): Promise<{ task: Moved; subtasks: Moved[] }> {
  const task = await transitionTask(db, { id: opts.id, from: opts.from, to: 'waiting_children', now: opts.now });
  const tree = await descendants(db, opts.id);
  // Which of them have subtasks of their own (not superseded versions), from the tree already read (hasSubtasks).
  const parents = new Set(tree.flatMap((t) => (t.status !== 'superseded' && t.parentId ? [t.parentId] : [])));
  const subtasks: Moved[] = [];
  for (const child of tree) {
    if (child.status !== 'cancelled') continue;
    const to = parents.has(child.id) ? 'waiting_children' : 'ready';
    const { before } = await transitionTask(db, { id: child.id, from: 'cancelled', to, fields: to === 'ready' ? { nextEligibleAt: null } : {}, now: opts.now });
    await db.run(`UPDATE tasks SET retry_baseline = attempt WHERE id = $1`, [child.id]);
    subtasks.push({ before, after: await taskRow(db, child.id) });
  }
  return { task, subtasks };
}
