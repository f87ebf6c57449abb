/**
 * Decomposition: an approved plan's subtasks become child tasks. All children
 * are created first, then each one's dependencies are mapped from plan indices
 * to the new ids (seed 002 §2.4). Indices out of range, a subtask depending on
 * itself, or a cycle among subtasks are refused before anything is written.
 */
import { findCycle } from '../../core/dag.js';
import { MaestroError } from '../../core/errors.js';
import type { Complexity, Priority, Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { newId } from '../rows.js';
import { createTask } from './createTask.js';

export interface SubtaskSpec {
  title: string;
  complexity: Complexity;
  priority: Priority;
  /** Indices into the subtask list. */
  deps: number[];
  ownedFiles: string[];
  expectedOutput: string | null;
}

export function checkSubtaskGraph(subtasks: readonly SubtaskSpec[]): void {
  subtasks.forEach((s, i) => {
    for (const d of s.deps) {
      if (!Number.isInteger(d) || d < 0 || d >= subtasks.length) throw new MaestroError('BAD_INPUT', `Subtask ${i} ("${s.title}") depends on index ${d}, outside 0..${subtasks.length - 1}.`);
      if (d === i) throw new MaestroError('SELF_DEPENDENCY', `Subtask ${i} ("${s.title}") depends on itself.`);
    }
  });
  const cycle = findCycle(subtasks.map((s, i) => ({ id: String(i), deps: s.deps.map(String) })));
  if (cycle) throw new MaestroError('DEPENDENCY_CYCLE', `The plan's subtasks form a cycle: ${cycle.map((i) => `#${i} ${subtasks[Number(i)]!.title}`).join(' → ')}.`);
}

export async function decomposeTask(db: Queryable, parent: Task, subtasks: readonly SubtaskSpec[], now: number): Promise<Task[]> {
  checkSubtaskGraph(subtasks);
  const ids = subtasks.map(() => newId('t'));
  const children: Task[] = [];
  for (const [i, s] of subtasks.entries()) {
    children.push(
      await createTask(
        db,
        {
          projectId: parent.projectId,
          parentId: parent.id,
          title: s.title,
          complexity: s.complexity,
          priority: s.priority,
          ownedFiles: s.ownedFiles,
          expectedOutput: s.expectedOutput,
          taskType: parent.taskType,
        },
        now + i,
        ids[i],
      ),
    );
  }
  for (const [i, s] of subtasks.entries()) {
    if (!s.deps.length) continue;
    const deps = s.deps.map((d) => ids[d]!);
    await db.run(`UPDATE tasks SET deps = $1 WHERE id = $2`, [JSON.stringify(deps), ids[i]!]);
    children[i] = { ...children[i]!, deps };
  }
  return children;
}
