/** Task fixtures for component tests: every field the server sends, overridable. */
import type { Task } from './api/types.js';

let n = 0;
export function makeTask(over: Partial<Task> = {}): Task {
  n++;
  return {
    id: `t_${n}`, projectId: 'p1', parentId: null, depth: 0, title: `Task ${n}`, complexity: 'medium', status: 'ready', priority: 1, deps: [], plan: null, spec: null,
    approvals: [], result: null, retryBaseline: 0, nextEligibleAt: null, lastRunError: null, taskType: null, scope: null, ownedFiles: [], expectedOutput: null,
    feedback: null, parentVersionId: null, version: 1, claimedAt: null, claimedBy: null, attempt: 0, leaseExpiresAt: null, createdAt: n, updatedAt: n,
    ...over,
  };
}
