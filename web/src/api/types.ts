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
export type { SchedulerDecision } from '../../../src/store/ops/decisions.js';
import type { SchedulerDecision } from '../../../src/store/ops/decisions.js';

export interface TaskDetail {
  task: Task;
  runs: Run[];
  children: Task[];
  lastDecision: SchedulerDecision | null;
  /** The whole version chain, oldest first (absent from daemons older than issue 15). */
  versions?: { id: string; version: number; status: import('../../../src/core/types.js').TaskStatus }[];
}

/*
 * The review API (issue 15, contract in notes/API15.md): GET /api/tasks/:id/diff,
 * /checks, /findings, and line comments on a reject.
 */
export type DiffLineKind = 'context' | 'add' | 'del';
export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  oldLine: number | null;
  newLine: number | null;
}
export interface DiffHunk {
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}
export type DiffFileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';
export interface DiffFile {
  path: string;
  oldPath: string | null;
  status: DiffFileStatus;
  binary: boolean;
  additions: number;
  deletions: number;
  /** Hunks left out because the change is large; `?file=` returns it whole (or still collapsed when huge). */
  collapsed: boolean;
  hunks: DiffHunk[];
}
export interface DiffResponse {
  taskId: string;
  version: number;
  branch: string;
  base: string;
  head: string;
  totals: { files: number; additions: number; deletions: number };
  files: DiffFile[];
}
export type CheckStatus = 'passed' | 'failed' | 'running' | 'pending' | 'skipped';
export interface CheckResult {
  name: string;
  command: string;
  status: CheckStatus;
  exitCode: number | null;
  durationMs: number | null;
  outputTail: string;
  runId: string | null;
}
export interface ChecksResponse {
  taskId: string;
  version: number;
  checks: CheckResult[];
}
export interface Verdict {
  reviewer: string;
  verdict: 'approve' | 'reject';
  summary: string;
  runId: string;
}
export interface Finding {
  reviewer: string;
  severity: string;
  file: string | null;
  line: number | null;
  message: string;
}
export interface FindingsResponse {
  taskId: string;
  version: number;
  verdicts: Verdict[];
  findings: Finding[];
}
/** A reviewer's comment on one line of the diff; `side` old is a deleted line's number in the old file. */
export interface LineComment {
  file: string;
  line: number;
  side: 'new' | 'old';
  text: string;
}

export interface ProjectDetail {
  project: Project;
  tasksByStatus: Record<string, number>;
}

/** GET /api/metrics (src/api/routes/reads.ts), from the store's own row types. */
export interface Metrics {
  tasksByStatus: Record<string, number>;
  runDurations: import('../../../src/store/ops/metrics.js').DurationStats[];
  usage: import('../../../src/store/ops/metrics.js').UsageByProject[];
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
