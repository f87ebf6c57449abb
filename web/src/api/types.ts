/**
 * The shapes the board reads. Domain types come from the server's own model
 * and input schemas (type-only imports: nothing of the server is bundled), so a
 * change there breaks this build instead of the screen.
 */
export type { Approval, Gate, MaestroEvent, Project, Run, Task, TaskStatus } from '../../../src/core/types.js';
export type { TaskInput, TaskEdit } from '../../../src/core/schemas.js';
export type { CancelBody, GateBody, MessageBody, RejectBody } from '../../../src/api/routes/tasks.js';
export { TASK_STATUSES } from '../../../src/core/status.js';
export type { TaskSummary } from '../../../src/core/taskSummary.js';
export { summarizeTask } from '../../../src/core/taskSummary.js';
import type { Project, Run, Task } from '../../../src/core/types.js';

export type { ScoreBreakdown } from '../../../src/core/scoring.js';
export type { SchedulerDecision } from '../../../src/core/reports.js';
import type { SchedulerDecision } from '../../../src/core/reports.js';

export interface TaskDetail {
  task: Task;
  runs: Run[];
  children: Task[];
  lastDecision: SchedulerDecision | null;
  /** The whole version chain, oldest first. */
  versions: import('../../../src/api/routes/review.js').VersionRef[];
}

/* The review API (issue 15): GET /api/tasks/:id/diff, /checks, /findings, and line comments on a reject. */
export type { DiffFile, DiffHunk, DiffLine, FileStatus as DiffFileStatus } from '../../../src/api/routes/review.js';
export type { ChecksResponse, DiffResponse, FindingsResponse } from '../../../src/api/routes/review.js';
export type { CheckView as CheckResult, FindingView as Finding, VerdictView as Verdict } from '../../../src/api/routes/review.js';
export type CheckStatus = import('../../../src/api/routes/review.js').CheckView['status'];
/** A reviewer's comment on one line of the diff; `side` old is a deleted line's number in the old file. */
export type { LineComment } from '../../../src/core/reports.js';

export interface ProjectDetail {
  project: Project;
  tasksByStatus: Record<string, number>;
}

/** GET /api/metrics (src/api/routes/reads.ts), from the store's own row types. */
export interface Metrics {
  tasksByStatus: Record<string, number>;
  runDurations: import('../../../src/core/reports.js').DurationStats[];
  usage: import('../../../src/core/reports.js').UsageByProject[];
}

export interface TranscriptSearch {
  runId?: string;
  q?: string;
  matches: { line: number; text: string }[];
}

export interface TraceChain {
  traceId: string;
  task: Task;
  chain: { run: Run; taskVersion: number; events: import('../../../src/core/types.js').MaestroEvent[] }[];
}

/** One SSE item of a run (ids are `<runId>:<seq>`). */
export interface StreamItem {
  id: string;
  kind: 'token' | 'phase' | 'clarify' | 'result' | 'error';
  data: { runId: string; seq: number; stage?: string; text?: string; state?: string; question?: string; message?: string; code?: string; [k: string]: unknown };
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}
