/**
 * Retries that end a merge conflict left to a person (core/mergeConflictWays.ts), besides the plain retry (which
 * sends work parked while merging back to merging: the same merge, the same conflict while main and the branch
 * still disagree). Each is one transaction with its status event (the Store's tasks.retry):
 *
 * - takeResolution: the person merged main into the task's branch by hand and names the commit. It becomes the
 *   commit the train takes (result.conflict, as a conflict run's resolution: core/reviewed.ts reviewedCommit) and
 *   the task goes back to merging. The train merges it only while the branch is still at it (a branch moved since
 *   is parked, mergeTrain.ts movedSinceReview), and records the merge once, as any merge.
 * - freshVersion: this version is superseded by the next one (nextVersion.ts), in ready with the approved plan,
 *   whose branch (its own name: maestro/<new id>-v<n+1>) starts from main as it is then. The old branch's work is
 *   not carried over; its worktree goes with the finished version's (daemon/runAftermath.ts).
 */
import { MaestroError } from '../../core/errors.js';
import { parkedByConflict } from '../../core/mergeConflictWays.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { getTask } from './getTask.js';
import { insertNextVersion } from './nextVersion.js';
import { hasSubtasks } from './taskTree.js';
import { transitionTask, type TransitionFields } from './transitionTask.js';

/**
 * Whether the task went to needs_attention from merging (its newest status event says so), was not edited
 * since (an edited task runs anew), and has a branch to merge.
 */
export async function parkedWhileMerging(q: Queryable, id: string): Promise<boolean> {
  const last = await q.one<{ type: string; payload: string }>(`SELECT type, payload FROM events WHERE task_id = $1 AND type IN ('task.status', 'task.edited') ORDER BY id DESC LIMIT 1`, [id]);
  const payload = last?.type === 'task.status' ? (JSON.parse(last.payload) as { from?: unknown; to?: unknown }) : {};
  if (payload.from !== 'merging' || payload.to !== 'needs_attention') return false;
  const task = await getTask(q, id);
  return typeof task.result?.branch === 'string';
}

/** The files the task's newest merge conflict named (its merge.conflict event; none for one recorded before they were). */
export async function conflictedFiles(q: Queryable, taskId: string): Promise<string[]> {
  const found = await q.one<{ payload: string }>(`SELECT payload FROM events WHERE task_id = $1 AND type = 'merge.conflict' ORDER BY id DESC LIMIT 1`, [taskId]);
  const files = found ? (JSON.parse(found.payload) as { files?: unknown }).files : undefined;
  return Array.isArray(files) ? files.filter((f): f is string => typeof f === 'string') : [];
}

/** The task parked by a merge conflict with its branch to merge, or a refusal that says what it is instead. */
async function conflictParked(q: Queryable, id: string): Promise<Task> {
  const task = await getTask(q, id);
  if (!parkedByConflict(task) || !(await parkedWhileMerging(q, id))) {
    throw new MaestroError('ILLEGAL_TRANSITION', `Task ${id} is ${task.status}${task.lastRunError ? ` (${task.lastRunError.slice(0, 200)})` : ''}, not parked by a merge conflict: --commit names the commit that resolved one by hand. Retry it without --commit.`, {
      details: { taskId: id, status: task.status },
    });
  }
  return task;
}

/** needs_attention (a merge conflict) → merging, the train to take `commit`, the person's resolution on the branch. */
export async function takeResolution(q: Queryable, opts: { id: string; commit: string; now: number }): Promise<{ before: Task; after: Task }> {
  const task = await conflictParked(q, opts.id);
  const files = await conflictedFiles(q, task.id);
  const result = { ...(task.result ?? {}), conflict: { resolvedBy: 'person', files, commitSha: opts.commit } };
  const { after } = await backToMerging(q, { id: task.id, fields: { result }, now: opts.now });
  return { before: task, after };
}

/**
 * needs_attention → merging: the approved work merged again, by any daemon's merge train, which needs no claimer.
 * The old claimer's lease, renewed or not, must never expire it back to ready (a new run, the approval dropped).
 */
export async function backToMerging(q: Queryable, opts: { id: string; fields?: TransitionFields; now: number }): Promise<{ before: Task; after: Task }> {
  const { before } = await transitionTask(q, { id: opts.id, from: 'needs_attention', to: 'merging', fields: opts.fields, now: opts.now });
  await q.run(`UPDATE tasks SET claimed_by = NULL, lease_expires_at = NULL WHERE id = $1`, [opts.id]);
  return { before, after: await getTask(q, opts.id) };
}

/** needs_attention → superseded, and the next version in ready: the task run again from the current main. */
export async function freshVersion(q: Queryable, opts: { id: string; who: string; now: number }): Promise<{ old: Task; before: Task; next: Task }> {
  const task = await getTask(q, opts.id);
  if (task.status !== 'needs_attention') {
    throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status}; only a task that needs attention can be run again from the current main (--fresh).`, { details: { taskId: task.id, status: task.status } });
  }
  if (await hasSubtasks(q, task.id)) {
    throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} was split into subtasks; retry it without --fresh (its cancelled subtasks go back to ready).`, { details: { taskId: task.id } });
  }
  const { after: old } = await transitionTask(q, { id: task.id, from: 'needs_attention', to: 'superseded', now: opts.now });
  const error = task.lastRunError ? task.lastRunError.slice(0, 1000) : null;
  const why = error ? `: ${error}` : '';
  const feedback = `Version ${task.version} stopped and needed attention${why}. ${opts.who} chose to run the task again from the current main: this version starts on a new branch from it, and nothing of version ${task.version}'s branch is carried over.`;
  const next = await insertNextVersion(q, task, { plan: task.plan, feedback, feedbackSource: { kind: 'fresh', version: task.version, who: opts.who, error }, now: opts.now });
  return { old, before: task, next };
}
