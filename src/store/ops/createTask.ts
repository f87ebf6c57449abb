/**
 * Creating a task: validated input, a project that exists, a parent and
 * dependencies in the same project (a superseded version taken to mean its
 * newest), no self-dependency. A new task cannot
 * close a cycle (nothing depends on it yet); edits check cycles (editTask).
 */
import { MaestroError } from '../../core/errors.js';
import { parseInput, taskInputSchema, type TaskInput } from '../../core/schemas.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { INSERT_TASK_SQL, newId, taskValues } from '../rows.js';
import { findTask } from './getTask.js';
import { archivedError, getProject } from './projects.js';

type DepRow = { id: string; project_id: string; status: string };

/**
 * The task a dependency names, at its newest version. A rejection supersedes a version with the next one
 * (gates.ts rejectGate) and repoints the tasks that depended on it then; a dependency named afterwards by
 * the old id means the same task, and kept as given it would wait for a version that never finishes.
 * A superseded version with no next one (a damaged chain) is refused, naming the id given.
 */
async function newestVersionOf(db: Queryable, dep: string): Promise<DepRow> {
  const named = await db.one<DepRow>(`SELECT id, project_id, status FROM tasks WHERE id = $1`, [dep]);
  if (!named) throw new MaestroError('UNKNOWN_TASK', `Dependency "${dep}" is not a known task.`, { details: { taskId: dep } });
  let row: DepRow = named;
  // Versions only point back at older ones; `seen` keeps a damaged chain that loops from hanging the daemon.
  const seen = new Set<string>();
  while (row.status === 'superseded') {
    seen.add(row.id);
    const next = await db.one<DepRow>(`SELECT id, project_id, status FROM tasks WHERE parent_version_id = $1 ORDER BY version DESC LIMIT 1`, [row.id]);
    if (!next || seen.has(next.id)) {
      throw new MaestroError('BAD_INPUT', `Dependency ${dep} was superseded, but its version chain ends at ${row.id} without a newer version to wait for; name the task you mean by its current id.`, {
        details: { taskId: dep, field: 'deps' },
      });
    }
    row = next;
  }
  return row;
}

function selfDependency(selfId: string, given: string): MaestroError {
  return new MaestroError('SELF_DEPENDENCY', `Task ${selfId} cannot depend on itself${given === selfId ? '' : ` (${given} is an older version of it)`}.`, { details: { taskId: selfId } });
}

/**
 * Checks that every dependency exists, is in `projectId`, and is not `selfId`, taking a superseded version
 * to mean its newest (newestVersionOf). Returns the dependencies to store, deduplicated in the order given,
 * each with its status.
 */
export async function checkDeps(db: Queryable, projectId: string, deps: readonly string[], selfId: string | null): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  for (const given of deps) {
    if (given === selfId) throw selfDependency(given, given);
    const row = await newestVersionOf(db, given);
    const dep = row.id;
    if (dep === selfId) throw selfDependency(dep, given);
    const named = dep === given ? dep : `${dep} (the newest version of ${given})`;
    // A cancelled task never finishes: a task waiting for it would wait for good, with nothing to say why.
    if (row.status === 'cancelled') {
      throw new MaestroError('BAD_INPUT', `Dependency ${named} is cancelled, so a task depending on it would never run. Retry it first (maestro task retry ${dep}) or leave it out.`, { details: { taskId: dep, field: 'deps' } });
    }
    if (row.project_id !== projectId) {
      throw new MaestroError('CROSS_PROJECT_DEPENDENCY', `Dependency ${named} belongs to project ${row.project_id}, not ${projectId}; tasks may only depend on tasks of their own project.`, {
        details: { taskId: dep, projectId: row.project_id },
      });
    }
    statuses.set(dep, row.status);
  }
  return statuses;
}

export async function createTask(db: Queryable, input: TaskInput, now: number, id: string = newId('t')): Promise<Task> {
  const valid = parseInput(taskInputSchema, input, 'task');
  const project = await getProject(db, valid.projectId);
  if (project.archivedAt !== null) throw archivedError(project, 'no task can be created in it');
  let depth = 0;
  if (valid.parentId) {
    const parent = await findTask(db, valid.parentId);
    if (!parent) throw new MaestroError('UNKNOWN_TASK', `Parent task "${valid.parentId}" is not a known task.`, { details: { taskId: valid.parentId } });
    if (parent.projectId !== project.id) throw new MaestroError('CROSS_PROJECT_DEPENDENCY', `Parent ${parent.id} belongs to another project.`);
    // A parent is done only when all its subtasks are, and cancelling one stops them: one added later would run on its own.
    if (parent.status === 'done' || parent.status === 'cancelled') {
      const retry = parent.status === 'cancelled' ? `, or retry the parent first (maestro task retry ${parent.id})` : '';
      throw new MaestroError('BAD_INPUT', `Parent ${parent.id} is ${parent.status}: a subtask created now would run outside it (a parent is done only when all its subtasks are). Create the task without a parent${retry}. Nothing was created.`, {
        details: { taskId: parent.id, field: 'parentId' },
      });
    }
    depth = parent.depth + 1;
  }
  const deps = [...(await checkDeps(db, project.id, valid.deps, id)).keys()];
  const task: Task = {
    id,
    projectId: project.id,
    parentId: valid.parentId,
    depth,
    title: valid.title,
    complexity: valid.complexity,
    status: 'ready',
    priority: valid.priority,
    deps,
    plan: valid.plan,
    spec: valid.spec,
    approvals: [],
    result: null,
    retryBaseline: 0,
    nextEligibleAt: null,
    lastRunError: null,
    taskType: valid.taskType,
    scope: valid.scope,
    ownedFiles: [...new Set(valid.ownedFiles)],
    expectedOutput: valid.expectedOutput,
    feedback: null,
    feedbackSource: null,
    parentVersionId: null,
    version: 1,
    claimedAt: null,
    claimedBy: null,
    attempt: 0,
    leaseExpiresAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await db.run(INSERT_TASK_SQL, taskValues(task));
  return task;
}
