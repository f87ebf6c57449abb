/**
 * The domain objects as the API sends them, as zod schemas: the parts the
 * route response schemas (responses.ts) are built from. They describe what
 * the store already returns (entities.test.ts checks each against its
 * TypeScript type, so a new field breaks the build until it is described
 * here); nothing parses a response through them, so the bytes sent are the
 * store's own JSON.
 *
 * Pure: zod and core only, no Node module, so the web board may import its
 * types from here (type-only imports; nothing of this is bundled).
 */
import { z } from 'zod';
import { feedbackSourceSchema, lineCommentSchema } from '../../core/feedbackSource.js';
import { TASK_STATUSES } from '../../core/status.js';
import { MERGE_CHECK_STATES } from '../../core/taskSummary.js';
import { COMPLEXITIES, DECISIONS, GATES, PRIORITIES, RUN_KINDS, RUN_STATUSES, TASK_SCOPES, TASK_TYPES } from '../../core/types.js';

const epochMs = z.number().describe('milliseconds since the epoch');
const json = z.record(z.string(), z.unknown());

export const projectSchema = z.strictObject({ id: z.string(), name: z.string(), repoPath: z.string(), config: json, createdAt: epochMs, updatedAt: epochMs, archivedAt: epochMs.nullable() });

export const approvalSchema = z.strictObject({
  id: z.string(),
  taskId: z.string(),
  gate: z.enum(GATES),
  decision: z.enum(DECISIONS),
  reason: z.string().nullable(),
  who: z.string(),
  at: epochMs,
  conflictResolution: z.boolean().describe("an exec_review approval of a conflict run's resolution, not of the task's change itself"),
});

export const taskSchema = z.strictObject({
  id: z.string(),
  projectId: z.string(),
  parentId: z.string().nullable(),
  depth: z.number(),
  title: z.string(),
  complexity: z.enum(COMPLEXITIES),
  status: z.enum(TASK_STATUSES),
  priority: z.literal(PRIORITIES).describe('0 is P0, the most urgent'),
  deps: z.array(z.string()),
  plan: z.string().nullable(),
  spec: z.string().nullable(),
  approvals: z.array(approvalSchema),
  result: json.nullable(),
  retryBaseline: z.number(),
  nextEligibleAt: epochMs.nullable(),
  lastRunError: z.string().nullable(),
  taskType: z.enum(TASK_TYPES).nullable(),
  scope: z.enum(TASK_SCOPES).nullable(),
  ownedFiles: z.array(z.string()),
  expectedOutput: z.string().nullable(),
  feedback: z.string().nullable().describe("what the version must address, in English (the agent's prompt reads it); feedbackSource says it as data"),
  feedbackSource: feedbackSourceSchema
    .nullable()
    .describe("the feedback as data, for a client to say in its own language: a person's rejection (kind rejection: gate, who, reason, line comments) or a retry from the current main (kind fresh: the version that stopped, who, its error); null without feedback or for a version made before this field"),
  parentVersionId: z.string().nullable(),
  version: z.number(),
  claimedAt: epochMs.nullable(),
  claimedBy: z.string().nullable(),
  attempt: z.number(),
  leaseExpiresAt: epochMs.nullable(),
  createdAt: epochMs,
  updatedAt: epochMs,
});

/** What a merge check is doing (core/taskSummary.ts MergeCheckState). */
export const mergeCheckState = z
  .enum(MERGE_CHECK_STATES)
  .describe(
    'running: its run is at work. With no run yet: starting (a run slot was free and its run is being started), waiting (every run slot of the daemon that opened it is taken, maxConcurrentRuns: it starts when one of those runs ends), ownerGone (the daemon that opened it, named by `daemon` in the task detail, is no longer alive, stopped or without a heartbeat: the next merge pass of a live daemon takes the check over)',
  );

/** The slim row of `GET /api/tasks?view=board` (src/core/taskSummary.ts picks the same fields). */
export const taskSummarySchema = taskSchema.pick({ id: true, projectId: true, parentId: true, title: true, status: true, priority: true, complexity: true, version: true, deps: true, createdAt: true, updatedAt: true }).extend({
  mergeCheck: z
    .strictObject({ round: z.number().int().nullable(), maxRounds: z.number().int().nullable(), state: mergeCheckState })
    .nullable()
    .optional()
    .describe('while the task is in merging and its merge check runs (the checks on its merge with main), or was opened and has no run yet (`state` says why): which round of at most how many; else null'),
  mergeTurn: z
    .strictObject({ behind: z.strictObject({ id: z.string(), title: z.string() }), together: z.number().int().optional() })
    .nullable()
    .optional()
    .describe("while the task is in merging, with no run of its own, behind another task's merge check at work or opened: that task (it lands after it); else null"),
});

export const runSchema = z.strictObject({
  id: z.string(),
  taskId: z.string(),
  kind: z.enum(RUN_KINDS),
  status: z.enum(RUN_STATUSES),
  model: z.string().nullable(),
  traceId: z.string(),
  attempt: z.number(),
  startedAt: epochMs,
  endedAt: epochMs.nullable(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
  error: z.string().nullable(),
  runDir: z.string().nullable(),
  owner: z.string().nullable(),
  workerPid: z.number().nullable(),
  outboxOffset: z.number(),
  outboxSeq: z.number(),
});

export const eventSchema = z.strictObject({
  id: z.number().describe('monotonic per store: the paging cursor'),
  projectId: z.string().nullable(),
  taskId: z.string().nullable(),
  runId: z.string().nullable(),
  traceId: z.string().nullable(),
  type: z.string(),
  payload: json,
  at: epochMs,
});

export const scoreBreakdownSchema = z.strictObject({ rankU: z.number(), chainInertia: z.number(), agingBonus: z.number(), couplingPenalty: z.number() });

export const schedulerDecisionSchema = z.strictObject({
  id: z.number(),
  projectId: z.string(),
  taskId: z.string(),
  owner: z.string(),
  score: z.number(),
  breakdown: scoreBreakdownSchema,
  competitors: z.array(z.strictObject({ taskId: z.string(), score: z.number() })),
  at: epochMs,
  takenOver: z
    .strictObject({ from: z.string().describe('the daemon whose lease on the task ended'), status: z.enum(TASK_STATUSES).describe('where the task stood when it was taken over') })
    .nullable()
    .describe('set when this row is a takeover, not a ranking: the score and breakdown are the ones the task was claimed with'),
});

export const durationStatsSchema = z.strictObject({ kind: z.string(), count: z.number(), meanMs: z.number(), p50Ms: z.number(), p95Ms: z.number(), maxMs: z.number() });
export const usageByProjectSchema = z.strictObject({ projectId: z.string(), runs: z.number(), inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() });

export const versionRefSchema = z.strictObject({ id: z.string(), version: z.number(), status: z.enum(TASK_STATUSES) });

/** A reviewer's comment on one line of the diff (core/feedbackSource.ts, where a rejection keeps them too). */
export { lineCommentSchema };

// ---- the review evidence (src/git/patch.ts, src/api/routes/reviewData.ts) ----

export const diffLineSchema = z.strictObject({
  kind: z.enum(['context', 'add', 'del']),
  text: z.string(),
  oldLine: z.number().nullable(),
  newLine: z.number().nullable(),
  noNewline: z.literal(true).optional().describe('the last line of its side, with no newline after it'),
});
export const diffHunkSchema = z.strictObject({ header: z.string(), oldStart: z.number(), oldLines: z.number(), newStart: z.number(), newLines: z.number(), lines: z.array(diffLineSchema) });
export const diffFileSchema = z.strictObject({
  path: z.string().describe('a name that is not UTF-8 as git quotes it ("n\\377.txt"); ?file= takes it so'),
  oldPath: z.string().nullable(),
  status: z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'type_changed']),
  oldMode: z.string().nullable().describe("git's mode before ('100644', '100755' executable, '120000' symlink); null when added"),
  newMode: z.string().nullable().describe("git's mode after; null when deleted"),
  binary: z.boolean().describe("a side's content is binary and not in hunks; a type change's other side (a symlink's target) still is"),
  gitBinary: z.enum(['nul_bytes', 'utf16', 'marked_diff']).optional().describe("git calls the file binary, and it is text shown in hunks all the same: it holds NUL bytes, it is UTF-16, or the project's .gitattributes marks it -diff"),
  additions: z.number(),
  deletions: z.number(),
  collapsed: z.boolean().describe('hunks omitted: the file is large, or the listing drew its 20,000 lines before it; ?file= asks for it whole'),
  hunks: z.array(diffHunkSchema),
  link: z
    .strictObject({
      target: z.string().describe('as stored; as git quotes a name when it is not UTF-8'),
      outside: z.boolean().describe("absolute, or climbing above the repository's root from the link's folder: judged from the text, never by following it on disk"),
    })
    .nullable()
    .describe('a symlink after the change (newMode 120000): where it points; else null'),
});

export const checkViewSchema = z.strictObject({
  name: z.string(),
  command: z.string(),
  status: z.enum(['passed', 'failed', 'running', 'pending', 'skipped']),
  exitCode: z.number().nullable(),
  durationMs: z.number().nullable(),
  outputTail: z.string(),
  runId: z.string().nullable(),
});
/**
 * `round`: which review of this version, counted over its whole history (1 = the first; a conflict run's review
 * counts): the newest is the one the gate decides on. Not the reviewer's budget count (reviewRounds), which a
 * person's retry starts afresh.
 */
export const verdictViewSchema = z.strictObject({ reviewer: z.string(), verdict: z.enum(['approve', 'reject']), summary: z.string(), runId: z.string(), round: z.number().int().positive() });
export const findingViewSchema = z.strictObject({ reviewer: z.string(), severity: z.string(), file: z.string().nullable(), line: z.number().nullable(), message: z.string(), runId: z.string(), round: z.number().int().positive() });

export const healthConditionSchema = z.strictObject({ code: z.enum(['DISK_FULL', 'HOME_READ_ONLY', 'REMOTE_UNREACHABLE', 'PROJECT_FOLDER_MISSING', 'SCHEMA_NEWER']), path: z.string(), message: z.string(), since: epochMs, projectId: z.string().optional() });

export const agentToolStatusSchema = z.strictObject({
  kind: z.enum(['claude', 'codex', 'gemini', 'cursor', 'opencode']),
  name: z.string(),
  executable: z.string(),
  path: z.string().nullable(),
  installed: z.boolean(),
  loggedIn: z.boolean().nullable(),
  detail: z.string(),
});
