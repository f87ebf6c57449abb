/** Fixtures for component tests: tasks and diffs with every field the server sends (overridable), a quiet EventSource. */
import type { DiffFile, DiffLine, DiffResponse, Task } from './api/types.js';

let n = 0;
export function makeTask(over: Partial<Task> = {}): Task {
  n++;
  return {
    id: `t_${n}`, projectId: 'p1', parentId: null, depth: 0, title: `Task ${n}`, complexity: 'medium', status: 'ready', priority: 1, deps: [], plan: null, spec: null,
    approvals: [], result: null, retryBaseline: 0, nextEligibleAt: null, lastRunError: null, taskType: null, scope: null, ownedFiles: [], expectedOutput: null,
    feedback: null, feedbackSource: null, parentVersionId: null, version: 1, claimedAt: null, claimedBy: null, attempt: 0, leaseExpiresAt: null, createdAt: n, updatedAt: n,
    ...over,
  };
}

/** A diff as GET /api/tasks/:id/diff answers it: `files` of `lines` changed lines each (half added, half context). */
export function makeDiff(over: Partial<DiffResponse> & { fileCount?: number; linesPerFile?: number } = {}): DiffResponse {
  const { fileCount = 2, linesPerFile = 4, ...rest } = over;
  const files: DiffFile[] = Array.from({ length: fileCount }, (_, f) => {
    const lines: DiffLine[] = Array.from({ length: linesPerFile }, (_, i) =>
      i % 2 === 0 ? { kind: 'add', text: `export const v${f}_${i} = ${i};`, oldLine: null, newLine: i + 1 } : { kind: 'context', text: `// line ${i}`, oldLine: i + 1, newLine: i + 1 },
    );
    const additions = lines.filter((l) => l.kind === 'add').length;
    return {
      path: `src/dir${f % 3}/file${f}.ts`, oldPath: null, status: 'modified', oldMode: '100644', newMode: '100644', binary: false, additions, deletions: 0, collapsed: false, link: null,
      hunks: [{ header: `@@ -1,${linesPerFile - additions} +1,${linesPerFile} @@`, oldStart: 1, oldLines: linesPerFile - additions, newStart: 1, newLines: linesPerFile, lines }],
    };
  });
  return {
    taskId: 't_1', version: 1, branch: 'maestro/t_1-v1', base: 'a'.repeat(40), head: 'b'.repeat(40), branchMoved: null,
    totals: { files: files.length, additions: files.reduce((n, f) => n + f.additions, 0), deletions: 0 }, files, ...rest,
  };
}

/** An EventSource that never connects: the task detail's live output, quiet in a test of the rest of the panel. */
export class QuietSource {
  readyState = 0;
  onopen = null;
  onerror = null;
  addEventListener() {}
  close() {}
}
