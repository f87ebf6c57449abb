/**
 * The slim task the board lists (`GET /api/tasks?view=board`): what a card,
 * the lane counts and the dependency graph read, without plans, specs,
 * results or approvals. A thousand of these are a fraction of the full rows.
 */
import type { Task } from './types.js';

export const TASK_SUMMARY_FIELDS = ['id', 'projectId', 'parentId', 'title', 'status', 'priority', 'complexity', 'version', 'deps', 'createdAt', 'updatedAt'] as const;

export type TaskSummary = Pick<Task, (typeof TASK_SUMMARY_FIELDS)[number]>;

export function summarizeTask(t: Task): TaskSummary {
  return { id: t.id, projectId: t.projectId, parentId: t.parentId, title: t.title, status: t.status, priority: t.priority, complexity: t.complexity, version: t.version, deps: t.deps, createdAt: t.createdAt, updatedAt: t.updatedAt };
}
