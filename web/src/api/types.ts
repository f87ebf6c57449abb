/**
 * The shapes the board reads. Each answer of a route is the `z.output` of the
 * response schema that route declares (src/api/wire/responses.ts), and the
 * domain types are the server's own (type-only imports: nothing of the server
 * is bundled), so a change there breaks this build instead of the screen.
 */
export type { Approval, Gate, MaestroEvent, Project, Run, Task, TaskStatus } from '../../../src/core/types.js';
export type { TaskInput, TaskEdit } from '../../../src/core/schemas.js';
export type { CancelBody, GateBody, MessageBody, RejectBody, RetryBody } from '../../../src/api/routes/tasks.js';
export { EDITABLE_STATUSES, LAST_ERROR_STATUSES, TASK_STATUSES } from '../../../src/core/status.js';
export { COMPLEXITIES, PRIORITIES, TASK_SCOPES, TASK_TYPES } from '../../../src/core/types.js';
export type { CardMergeCheck, CardMergeTurn, MergeCheckState, TaskSummary } from '../../../src/core/taskSummary.js';
export { summarizeTask } from '../../../src/core/taskSummary.js';
export type { ScoreBreakdown } from '../../../src/core/scoring.js';
export type { SchedulerDecision } from '../../../src/core/reports.js';
/* The commands and config fragments `maestro task show` gives for a change the diff gate refused: the board gives the same. */
export { diffStatCommand, EDIT_NAMES_AT_MOST, narrowCommand, ownedFilesEdit, PROJECT_CONFIG_FILE, raiseLimitJson } from '../../../src/core/diffGateWays.js';
export type { RaisableLimit } from '../../../src/core/diffGateWays.js';
/* The branch a project's tasks start from and merge into (its config's baseBranch, else main): the daemon's rule. */
export { baseBranchOf } from '../../../src/core/baseBranch.js';
/* The ways out of a merge conflict left to a person, as `maestro task show` gives them. */
export { freshRetryCommand, resolveByHandCommands, resolvedRetryCommand } from '../../../src/core/mergeConflictWays.js';
/* Auto-approval's rule (a change that lets more through applies to tasks reaching a gate from then on): the CLI's too. */
export { autoApproveAfterMs, widensAutoApproval } from '../../../src/core/autoApproval.js';

/* What the routes answer: GET /api/tasks/:id, /api/traces/:traceId, /api/metrics, the transcript's ?q=, the SSE items, … */
export type {
  CancelResponse,
  ChecksResponse,
  DecisionList,
  DiffGateRefusal,
  DiffResponse,
  MergeConflictParkWire,
  EventPage,
  FindingsResponse,
  HealthResponse,
  Metrics,
  ProjectConfigResponse,
  ProjectDetail,
  ProjectList,
  ProjectResponse,
  RejectResponse,
  RunList,
  RunMessageResponse,
  StreamItem,
  TaskBoardList,
  TaskDetail,
  TaskResponse,
  TraceChain,
  TranscriptSearch,
  VersionRef,
} from '../../../src/api/wire/responses.js';

/* The review API (issue 15): GET /api/tasks/:id/diff, /checks, /findings, and line comments on a reject. */
export type { DiffFile, DiffHunk, DiffLine, FileStatus as DiffFileStatus } from '../../../src/api/wire/responses.js';
export type { CheckView as CheckResult, FindingView as Finding, VerdictView as Verdict } from '../../../src/api/wire/responses.js';
export type CheckStatus = import('../../../src/api/wire/responses.js').CheckView['status'];
/** A reviewer's comment on one line of the diff; `side` old is a deleted line's number in the old file. */
export type { LineComment } from '../../../src/core/reports.js';

export interface ApiErrorBody {
  error: { code: string; message: string };
}
/* GET /api/daemons: the daemons sharing the database (several on one PostgreSQL), as `maestro daemons` lists them. */
export type { DaemonEntry, DaemonList } from '../../../src/api/wire/daemons.js';
export type { DaemonSettings } from '../../../src/core/daemonSettings.js';
export { CLOCK_SKEW_WORTH_SAYING_MS, settingText } from '../../../src/core/daemonText.js';

/* A task's knowledge session (`task-<id>`): where `maestro task show` finds what its runs staged, and so does the board. */
export { leftToDecide, sessionIdFor } from '../../../src/core/supersededVersion.js';
