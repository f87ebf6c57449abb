/**
 * Editing a task's fields, in the statuses core/status.ts names EDITABLE_STATUSES
 * (the rule the board offers Edit by). Refused with TASK_BUSY while a run is in
 * flight (the task is read-only then), with ILLEGAL_TRANSITION once it is final,
 * and with DEPENDENCY_CYCLE when new dependencies would close a cycle, naming it.
 */
import { assertAcyclic } from '../../core/dag.js';
import { MaestroError } from '../../core/errors.js';
import { parseInput, taskEditSchema, type TaskEdit } from '../../core/schemas.js';
import { EDITABLE_STATUSES, IN_FLIGHT_STATUSES } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable, SqlValue } from '../db.js';
import { checkDeps } from './createTask.js';
import { getTask } from './getTask.js';

const COLUMN: Record<keyof TaskEdit, string> = {
  title: 'title',
  complexity: 'complexity',
  priority: 'priority',
  deps: 'deps',
  plan: 'plan',
  spec: 'spec',
  taskType: 'task_type',
  scope: 'scope',
  ownedFiles: 'owned_files',
  expectedOutput: 'expected_output',
};

/** Statuses in which a task's work has not started: what it depends on still decides when it does. */
const NOT_STARTED: readonly Task['status'][] = ['ready', 'cancelled'];

/**
 * A task whose work has started (at a gate, waiting for its children, or parked for a person) went past its
 * dependencies' check when it was claimed: nothing checks them again, and its approval would merge it while a
 * dependency it was given now is still at work. So a dependency added then must be done already.
 */
function assertStartedWithDeps(task: Task, statuses: ReadonlyMap<string, string>): void {
  if (NOT_STARTED.includes(task.status)) return;
  for (const [dep, status] of statuses) {
    if (!task.deps.includes(dep) && status !== 'done') {
      throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status}: its work started without ${dep}, which is ${status}; a dependency added now must be done already (or cancel the task and retry it: from ready it waits for its dependencies).`, {
        details: { taskId: task.id, status: task.status, dependency: dep, field: 'deps' },
      });
    }
  }
}

/**
 * Where the plan is what a person reviews or approved: at plan_review the approval creates the proposed subtasks
 * (the planner's result), not this text, so an edited plan was shown over subtasks it did not make (a trial: "Only
 * one subtask" above Part one and Part two, both created). At exec_review and while its subtasks run, the plan is
 * the one approved and worked to. What changes a proposed plan is a rejection with a reason: the planner plans
 * again with it.
 */
const PLAN_SETTLED: readonly Task['status'][] = ['plan_review', 'spec_review', 'exec_review', 'waiting_children'];

function assertPlanEditable(task: Task): void {
  if (!PLAN_SETTLED.includes(task.status)) return;
  const what =
    task.status === 'plan_review'
      ? 'its approval creates the proposed subtasks, not the plan text. To change them, reject the plan with a reason (maestro task reject): the planner plans again with it'
      : 'its plan was approved and its work follows it. To plan it again, cancel it and create a new task';
  throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status}: its plan cannot be edited, as ${what}. Nothing was changed.`, { details: { taskId: task.id, status: task.status, field: 'plan' } });
}

/** Why a task outside EDITABLE_STATUSES is refused: a run in flight (until it ends), or a final status (for good). */
function notEditable(task: Task): MaestroError {
  const details = { taskId: task.id, status: task.status };
  if (IN_FLIGHT_STATUSES.includes(task.status)) {
    return new MaestroError('TASK_BUSY', `Task ${task.id} is ${task.status}: a run is in flight and the task is read-only until it ends.`, { details });
  }
  return new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status} and can no longer be edited.`, { details });
}

export async function editTask(db: Queryable, id: string, edit: TaskEdit, now: number): Promise<Task> {
  const valid = parseInput(taskEditSchema, edit, 'task edit');
  const task = await getTask(db, id);
  if (!EDITABLE_STATUSES.includes(task.status)) throw notEditable(task);
  if (valid.plan !== undefined) assertPlanEditable(task);
  if (valid.deps) {
    const statuses = await checkDeps(db, task.projectId, valid.deps, id);
    valid.deps = [...statuses.keys()];
    assertStartedWithDeps(task, statuses);
    const rows = await db.all<{ id: string; deps: string; title: string }>(`SELECT id, deps, title FROM tasks WHERE project_id = $1`, [task.projectId]);
    const nodes = rows.map((r) => ({ id: r.id, deps: r.id === id ? valid.deps! : (JSON.parse(r.deps) as string[]) }));
    assertAcyclic(nodes, new Map(rows.map((r) => [r.id, r.title])));
  }
  const sets: string[] = [];
  const params: SqlValue[] = [];
  for (const [key, value] of Object.entries(valid) as [keyof TaskEdit, unknown][]) {
    if (value === undefined) continue;
    params.push(Array.isArray(value) ? JSON.stringify(value) : (value as SqlValue));
    sets.push(`${COLUMN[key]} = $${params.length}`);
  }
  if (!sets.length) return task;
  params.push(now, id, task.status);
  const changed = await db.run(`UPDATE tasks SET ${sets.join(', ')}, updated_at = $${params.length - 2} WHERE id = $${params.length - 1} AND status = $${params.length}`, params);
  if (changed !== 1) throw new MaestroError('TASK_BUSY', `Task ${id} changed while it was being edited; reload and try again.`);
  return getTask(db, id);
}
