/**
 * What each core route answers, declared once. A route names its schema in
 * its spec (`response`, src/api/route.ts); from there it is typed against
 * the handler's return value, rendered into /api/openapi.json, and its
 * `z.output` is the type the web board, the CLI and the MCP server read.
 *
 * Pure (zod and core only): the web app imports types from here.
 */
import { z } from 'zod';
import {
  agentToolStatusSchema,
  approvalSchema,
  checkViewSchema,
  diffFileSchema,
  durationStatsSchema,
  eventSchema,
  findingViewSchema,
  healthConditionSchema,
  mergeCheckState,
  projectSchema,
  runSchema,
  schedulerDecisionSchema,
  taskSchema,
  taskSummarySchema,
  usageByProjectSchema,
  verdictViewSchema,
  versionRefSchema,
} from './entities.js';

const tasksByStatus = z.record(z.string(), z.number()).describe('task counts by status; absent statuses have no tasks');

export const agentSandboxState = z
  .strictObject({
    kind: z.enum(['bwrap', 'off']).describe('bwrap: agents and checks run in the bubblewrap sandbox; off: as the user who started the daemon'),
    reason: z.string().nullable().describe('why agents run unsandboxed, with what to do about it; null in the sandbox'),
    unintended: z.boolean().describe('off without having been asked to be (agentSandbox "auto" found no working bwrap)'),
    sockets: z.string().nullable().optional().describe('in the sandbox: why abstract sockets made outside it (an X11 display\'s) stay reachable, null when they do not'),
    network: z.enum(['shared', 'proxied', 'none']).optional().describe('in the sandbox: its network (agentSandbox.network): the host\'s, through Maestro\'s proxy, or none'),
  })
  .describe('how this daemon runs agents');
export const healthResponse = z.strictObject({
  ok: z.boolean().describe('false while any condition lasts'),
  conditions: z.array(healthConditionSchema),
  agentSandbox: agentSandboxState.optional(),
  database: z.string().optional().describe('the database this daemon uses: sqlite:<path>, or its PostgreSQL URL with the password as ***'),
});
export const openApiResponse = z.record(z.string(), z.unknown()).describe('this document');

export const projectListResponse = z.strictObject({ projects: z.array(projectSchema) });
export const projectResponse = z.strictObject({ project: projectSchema });
export const projectConfigResponse = z.strictObject({
  project: projectSchema,
  cannotRun: z.string().nullable().describe("why the project's tasks could not run with the settings saved (its agent provider as the daemon sees it: a script or command that is not there, no credentials), and the way out; else null. The settings are saved all the same"),
  autoApproval: z
    .strictObject({
      afterMs: z.number().int().nullable().describe('autoApproveAfterMs now; null: off'),
      previousMs: z.number().int().nullable().describe('autoApproveAfterMs before'),
      waiting: z.number().int().describe('tasks at a gate it does not approve: they wait for a person'),
    })
    .nullable()
    .describe('what the change of autoApproveAfterMs means (core/autoApproval.ts): switched on or shortened, it applies to tasks that reach a gate from now on; null when it did not change'),
});
export const projectCreatedResponse = z.strictObject({
  project: projectSchema,
  runs: z
    .strictObject({
      hooks: z.array(z.string()).describe('hook files in the repository’s .maestro/, relative to it'),
      checks: z.array(z.strictObject({ name: z.string(), command: z.union([z.string(), z.array(z.string())]) })),
      problem: z.string().nullable().describe('why .maestro/config.json could not be read (its checks are then unknown)'),
    })
    .nullable()
    .describe('the commands the repository itself makes this machine run (its hooks and checks), to be looked at before its first task; null for a shared remote, whose main each daemon reads in its clone'),
});
export const projectDetailResponse = z.strictObject({
  project: projectSchema,
  tasksByStatus,
  repository: z
    .strictObject({
      file: z.string().nullable().describe('the settings file in the repository, relative to it (.maestro/config.json or config.yaml); null when it has none'),
      hooks: z.array(z.string()).describe('hook files in the repository’s .maestro/, relative to it'),
      checks: z.array(z.strictObject({ name: z.string(), command: z.union([z.string(), z.array(z.string())]) })),
      limits: z.record(z.string(), z.number()),
      models: z.record(z.string(), z.string()),
      problem: z.string().nullable().describe('why the file could not be read (its settings are then unknown)'),
    })
    .nullable()
    .describe('what the repository’s own .maestro/ sets: its checks, limits, model tiers and hooks come from there only (the daemon stores none of them); null for a shared remote, whose main each daemon reads in its clone'),
});

/** Paging of GET /api/tasks: a page holds at most `limit` tasks (default 500); the rest are asked for with offset=nextOffset. */
const taskPaging = {
  total: z.number().int().nullable().describe('how many tasks projectId, status and parentId match, all pages together; null when q is given (q is matched page by page)'),
  nextOffset: z.number().int().nullable().describe('the offset of the next page; null when this page is the last'),
};
export const taskFullListResponse = z.strictObject({ tasks: z.array(taskSchema), ...taskPaging });
export const taskBoardListResponse = z.strictObject({ tasks: z.array(taskSummarySchema).describe('the slim rows of view=board'), ...taskPaging });
export const taskListResponse = z.union([taskFullListResponse, taskBoardListResponse]);
export const taskResponse = z.strictObject({ task: taskSchema });
/** Why the diff gate refused a task's change: what it went over, with the numbers (executor/pipelines/executor.ts). */
export const diffGateRefusalSchema = z.strictObject({
  runId: z.string().describe('the run whose change was refused'),
  branch: z.string().describe("the task's branch, which a retry starts from: at the refused commit when `committed`, else at its last commit"),
  lines: z.strictObject({ changed: z.number().int(), limit: z.number().int() }).nullable().describe('lines added and deleted, over limits.maxDiffLines; null when within it'),
  files: z.strictObject({ changed: z.number().int(), limit: z.number().int() }).nullable().describe('files changed, over limits.maxDiffFiles; null when within it'),
  outsideOwned: z.strictObject({ count: z.number().int(), files: z.array(z.string()).describe('the first hundred') }).nullable().describe("files changed that the task's ownedFiles do not cover; null when none"),
  largeFiles: z.strictObject({ limit: z.number().int(), files: z.array(z.strictObject({ path: z.string(), bytes: z.number().int() })) }).nullable().describe('files added or grown past limits.maxFileBytes; null when none'),
  strayGitlinks: z.array(z.string()).describe('git repositories committed as gitlinks (or made inside the worktree), not as files'),
  committed: z
    .boolean()
    .describe("whether the refused change was committed on the branch (refused after the commit; a retry goes on from it); false when refused before anything was committed: a file too large or a git repository the agent made is still in the worktree, uncommitted, and a retry starts from the branch's last commit"),
});

/** A merge conflict left to a person: where the work is and what conflicted (core/mergeConflictWays.ts names the ways out). */
export const mergeConflictParkSchema = z.strictObject({
  branch: z.string().describe("the task's branch, holding the approved work"),
  baseBranch: z.string().describe('the branch it merges into'),
  remote: z.string().nullable().describe('the shared remote the branch and main live on; null for the project’s own repository'),
  worktree: z.string().nullable().describe("the task's worktree on the daemon's machine, the branch checked out, while it is there; else null"),
  midMerge: z.boolean().describe('whether that worktree is in the middle of merging the base branch, as a failed conflict run left it (the ways out then abort that merge first)'),
  files: z.array(z.string()).describe('the files that conflicted at the last merge'),
  conflictRuns: z.number().int().describe('conflict runs the task had'),
});

/** At exec_review, the base branch's commits the task's branch lacks (api/routes/baseMoved.ts). */
export const baseMovedSchema = z.discriminatedUnion('state', [
  z.strictObject({
    state: z.literal('counted'),
    base: z.string().describe('the base branch'),
    branch: z.string().describe("the task's branch"),
    commits: z.number().int().nonnegative().describe('commits on the base the branch lacks: those since their merge base (the base moved since the branch was cut, or last took it in); 0 when up to date'),
    mergeStrategy: z.enum(['ff-only', 'merge', 'no-ff']).nullable().describe("the merge strategy main's .maestro/config.json names (null when that file is broken: the merge will say so). merge/no-ff: a moved base is merged onto as it is, the project's checks run on that merged tree first when it has any (the merge queue), and only a result they pass lands; ff-only: a conflict run brings the base in first, runs the checks and the reviews, and the result comes back to this gate"),
    checks: z.number().int().nonnegative().describe("the checks main's .maestro/config.json names (0 when that file is broken): with merge/no-ff and a moved base, they run on the merged tree before it lands"),
  }),
  z.strictObject({
    state: z.literal('missing'),
    base: z.string(),
    branch: z.string(),
    missing: z.enum(['branch', 'base', 'both']).describe('which of the two is not in the repository (on a shared remote: in this daemon\'s clone, as last fetched)'),
  }),
]);

export const taskDetailResponse = z.strictObject({
  task: taskSchema,
  runs: z.array(runSchema),
  children: z.array(taskSchema),
  lastDecision: schedulerDecisionSchema.nullable(),
  versions: z.array(versionRefSchema).describe('the whole version chain, oldest first'),
  question: z
    .strictObject({ text: z.string(), clarifyId: z.string().nullable(), askedAt: z.number().int() })
    .nullable()
    .describe("the agent's question while the task is awaiting_input (answer it with POST /api/tasks/:id/reply), else null"),
  baseBranch: z.string().describe("the branch the task's project starts its tasks from and merges them into (its config's baseBranch, else main): what an approval at exec_review merges into"),
  baseMoved: baseMovedSchema.nullable().describe("at exec_review: how many commits the base branch gained that the task's branch lacks (one git rev-list), or which of the two is missing; null at any other status, or when the repository cannot be read"),
  feedbackAt: z.number().int().nullable().describe("when the rejection this version carries as feedback was made (the previous version's reject decision); null when it carries none"),
  mergeBlocked: z.string().nullable().describe("at exec_review: why an approval could not merge now (the project's checkout is gone, or not clean on its main branch, or holds untracked files the branch adds or git-ignored files where it puts its own, or the branch moved after its review; on a shared remote, the task's branch there, as this daemon's clone last fetched it, holding commits on top of the approved one, named), else null"),
  steeringFiles: z
    .array(z.string())
    .describe("files the change touches that steer later runs (.maestro/ hooks and checks, .workflow/ specs and knowhow, which skip the knowledge review): said before approving. A file reached through a link on the branch (`.workflow` → `docs/wf`) is named where it is, then `(through the link .workflow)`"),
  runsElsewhere: z
    .array(z.string())
    .describe('at exec_review, files the change touches that run code outside Maestro once merged: CI (.github/workflows, .gitlab-ci.yml, …), git hooks (.husky, .pre-commit-config.yaml, …), dev containers, editor tasks and settings, .envrc (direnv) and mise config, and a package.json whose scripts changed (core/runsElsewhere.ts): said before approving, nothing is blocked. A file reached through a link on the branch is named as in steeringFiles'),
  stuckOn: z
    .array(z.strictObject({ id: z.string(), title: z.string(), status: z.string() }))
    .describe('for a ready task: its direct dependencies that will not finish by themselves (cancelled, needing attention, or a superseded version); retry them, point the task at the newest version (give the same deps again), or drop them from deps'),
  waitingOn: z
    .array(z.strictObject({ id: z.string(), title: z.string(), status: z.string() }))
    .describe('for a ready task: its direct dependencies that are not done yet but on their way (running, queued, or waiting for a person at a gate or on a question); it starts when they are done'),
  waitingForSlot: z
    .strictObject({ limit: z.number().int(), held: z.array(z.strictObject({ id: z.string(), title: z.string(), status: z.string() })) })
    .nullable()
    .describe("for a ready task whose dependencies are done: this daemon's places for its project (maxConcurrentRunsPerProject) are all taken, by these tasks (a task awaiting an answer keeps its place until the reply); else null"),
  heldBack: z
    .array(healthConditionSchema)
    .describe("this daemon's conditions (GET /api/health) that hold the task back: for a ready task a full disk, a read-only home or a newer schema (they pause every claim); for a ready, claimed or merging one its project's shared remote that this daemon cannot reach (a claimed task waits with its claim). One daemon's view: another may reach the remote"),
  diffGate: diffGateRefusalSchema
    .nullable()
    .describe("for a task that needs attention because the diff gate refused its change: what it refused (raise the limit in the project's .maestro/config.json, change the task's ownedFiles or narrow the task, then retry); else null"),
  mergeConflict: mergeConflictParkSchema
    .nullable()
    .describe('for a task that needs attention because main and its branch conflict and a person must settle it: resolve it by hand on the branch and retry with commit, retry with fresh (a new version from the current main), or cancel; else null'),
  claimedElsewhere: z
    .strictObject({
      daemon: z.string().describe("the daemon's name (--name)"),
      lastHeardMsAgo: z.number().int().nullable().describe('since its last heartbeat, by the database\'s clock (PostgreSQL\'s now(): hosts\' clocks may disagree); null when no daemon of that name runs (a stop takes its name off the database)'),
      leaseEndsInMs: z.number().int().nullable().describe('until its lease on the task ends (negative: ended, and the next tick of any daemon takes the task over at reviewing, or back to ready); a running daemon renews it, a stopping one ends it at once for a task with no run in flight'),
    })
    .nullable()
    .describe('for a task in flight that another daemon on the same database holds: which one, when it was last heard from and when its lease ends; else null'),
  waitingForRun: z
    .strictObject({
      daemon: z.string().describe('the daemon holding the task (--name)'),
      limit: z.number().int().describe('its maxConcurrentRuns'),
      running: z.array(z.strictObject({ taskId: z.string(), kind: z.string() })).describe('the runs it has going'),
    })
    .nullable()
    .describe('for a claimed task in flight with no run going (its next stage, or a review taken over from a stopped daemon, not started): the daemon holding it has every run slot taken, so the stage starts there when one of these runs ends; else null'),
  mergeCheck: z
    .strictObject({
      runId: z.string().nullable().describe('the merge_check run; null while it has none yet'),
      daemon: z.string().nullable().describe('the daemon running it (--name); with no run yet, the one that opened it and owes its run'),
      check: z.string().nullable().describe('the check at work on the merged tree; null while main is being merged into the branch (before the checks), or while it has no run'),
      round: z.number().int().nullable().describe('which merge check of this approval it is (main moved during the ones before)'),
      maxRounds: z.number().int().nullable().describe('merge checks an approval may pass while main keeps moving, before a person is asked'),
      state: mergeCheckState,
    })
    .nullable()
    .describe("for a task in merging whose merge check run is at work, or was opened by a train and has no run yet (the merge queue: main moved since its branch was cut, and the project's checks run on the merge before it lands): what it is doing; else null"),
  mergeTurn: z
    .strictObject({
      behind: z.strictObject({ id: z.string(), title: z.string() }).describe('the task whose merge check runs now'),
      together: z.number().int().optional().describe('set when this task is checked together with it, in that one merge check (the merge queue checks approved changes in batches): how many changes the check holds; they land together'),
    })
    .nullable()
    .describe('for a task in merging with no run of its own while another task of its project has its merge check at work or opened (the merge queue runs one merge check at a time, and nothing else of the project lands meanwhile): that task; this one lands after it. Else null'),
  knowledgeElsewhere: z
    .array(
      z.strictObject({
        daemon: z.string().describe('the daemon the run ran on (--name)'),
        runId: z.string(),
        kind: z.string(),
        host: z.string().nullable().describe('its host, while it is registered on the database (a stop takes its row away)'),
        home: z.string().nullable().describe('its MAESTRO_HOME on that host, while it is registered'),
        error: z.string().nullable().describe("why the ledger that daemon stored for the run could not be imported here (it does not read); null: it stored none (the run finished before ledgers were stored)"),
      }),
    )
    .describe("at exec_review: the task's finished plan, execute and conflict runs on another daemon (a task taken over at review) whose knowledge candidates could not be brought into this daemon's session from the database; they are staged only in that daemon's clone of the project (.workflow/sessions/<session>/runs/<run>/): review them on that host. Runs whose candidates were imported, or that proposed none, are not listed; empty at any other status"),
});
export const cancelResponse = z.strictObject({
  task: taskSchema,
  subtasksCancelled: z.array(z.strictObject({ id: z.string(), title: z.string() })).describe('the subtasks (at any depth) that were not finished and were cancelled with the task, each with its own status event'),
});
export const rejectResponse = z.strictObject({ task: taskSchema.describe('the rejected version'), next: taskSchema.describe('the new version that carries the feedback') });
export const runMessageResponse = z.strictObject({ runId: z.string().describe('the run the message was given to') });

export const runListResponse = z.strictObject({ runs: z.array(runSchema) });
export const runResponse = z.strictObject({ run: runSchema });
export const approvalListResponse = z.strictObject({ approvals: z.array(approvalSchema) });
export const eventPageResponse = z.strictObject({
  events: z.array(eventSchema),
  nextAfter: z.number().nullable().describe('oldest first: the `after` of the next page; null at the end (and newest first)'),
  nextBefore: z.number().nullable().describe('newest first: the `before` of the next page; null at the end (and oldest first)'),
});
export const metricsResponse = z.strictObject({ tasksByStatus, runDurations: z.array(durationStatsSchema), usage: z.array(usageByProjectSchema) });
export const decisionListResponse = z.strictObject({ decisions: z.array(schedulerDecisionSchema) });
export const traceResponse = z.strictObject({
  traceId: z.string(),
  task: taskSchema,
  chain: z.array(z.strictObject({ run: runSchema, taskVersion: z.number(), events: z.array(eventSchema) })).describe("every run of the task's versions, oldest first, with its events"),
});

export const diffResponse = z.strictObject({
  taskId: z.string(),
  version: z.number(),
  branch: z.string(),
  base: z.string().describe('the merge base the change is shown against'),
  head: z
    .string()
    .describe("the commit whose change is shown: once the version's reviewers approved one (exec_review and after), that reviewed commit, not the branch's tip; before, the tip. POST /api/tasks/:id/approve's `commit` names it"),
  branchMoved: z
    .strictObject({ reviewed: z.string(), tip: z.string(), message: z.string().describe("what it means, as the task detail's mergeBlocked says it") })
    .nullable()
    .describe("the branch's tip when it moved after the review (not the reviewed commit `head` shows): the merge would refuse it; null otherwise, and on a shared remote"),
  totals: z.strictObject({ files: z.number(), additions: z.number(), deletions: z.number() }),
  files: z.array(diffFileSchema),
});
export const checksResponse = z.strictObject({ taskId: z.string(), version: z.number(), checks: z.array(checkViewSchema) });
export const findingsResponse = z.strictObject({ taskId: z.string(), version: z.number(), verdicts: z.array(verdictViewSchema), findings: z.array(findingViewSchema) });

/** `?q=` on a transcript: the matching lines; runId and q are absent when the task has no run yet. */
export const transcriptSearchResponse = z.strictObject({
  runId: z.string().optional(),
  q: z.string().optional(),
  matches: z.array(z.strictObject({ line: z.number().describe('1-based'), text: z.string() })),
});
/** Without `?q=`: the transcript itself, one JSON object a line. */
export const transcriptLine = z.record(z.string(), z.unknown()).describe('one transcript record');

export const STREAM_KINDS = ['token', 'phase', 'clarify', 'result', 'error'] as const;
/** The `data:` of one SSE item: the run and its sequence number, then the outbox record's own fields. */
export const streamData = z
  .object({
    runId: z.string(),
    seq: z.number(),
    stage: z.string().optional(),
    text: z.string().optional(),
    state: z.string().optional(),
    question: z.string().optional(),
    message: z.string().optional(),
    code: z.string().optional(),
  })
  .catchall(z.unknown());
/**
 * The SSE event a stream's replay sends, once, before the items it replays, when it left out items after the client's
 * Last-Event-ID (it reads at most OUTBOX_TAIL_BYTES of a task's outboxes): `runs` names every run it left items of,
 * oldest first, and the fields beside it repeat the first of them (what a client that reads one run shows). It has
 * no SSE id: it is no place to resume from, and a client's Last-Event-ID stays the last item it got.
 */
export const REPLAY_TRUNCATED = 'replay.truncated';
const replayGap = z.strictObject({
  runId: z.string(),
  firstSeq: z.number().nullable().describe("the seq of the run's first item replayed; null: none of its items are"),
  unreadBytes: z.number().describe("the items left out are in the first unreadBytes of the run's outbox, which the replay did not read"),
  transcript: z.string().describe('the path of the run\'s whole transcript (GET /api/tasks/:id/transcript?runId=)'),
});
export const replayTruncatedData = replayGap.extend({
  runs: z.array(replayGap).min(1).describe('every run whose items the replay left out, oldest first (the first is the one the other fields name): one event for the whole replay, however many runs it spans'),
});
/**
 * One SSE item as the board holds it: `kind` the SSE event name; `id` is `<runId>:<seq>`, or for what a replay left
 * out (which has no SSE id), one the board gives it.
 */
export const streamItem = z.discriminatedUnion('kind', [
  z.strictObject({ id: z.string(), kind: z.enum(STREAM_KINDS), data: streamData }),
  z.strictObject({ id: z.string(), kind: z.literal(REPLAY_TRUNCATED), data: replayTruncatedData }),
]);

export const agentListResponse = z.strictObject({ agents: z.array(agentToolStatusSchema) });

type Out<S extends z.ZodType> = z.output<S>;
export type HealthResponse = Out<typeof healthResponse>;
export type ProjectList = Out<typeof projectListResponse>;
export type ProjectResponse = Out<typeof projectResponse>;
export type ProjectConfigResponse = Out<typeof projectConfigResponse>;
export type ProjectCreatedResponse = Out<typeof projectCreatedResponse>;
export type TaskList = Out<typeof taskFullListResponse>;
export type TaskBoardList = Out<typeof taskBoardListResponse>;
export type TaskResponse = Out<typeof taskResponse>;
export type RunList = Out<typeof runListResponse>;
export type ProjectDetail = Out<typeof projectDetailResponse>;
export type TaskDetail = Out<typeof taskDetailResponse>;
export type DiffGateRefusal = Out<typeof diffGateRefusalSchema>;
export type BaseMoved = Out<typeof baseMovedSchema>;
export type MergeConflictParkWire = Out<typeof mergeConflictParkSchema>;
export type RejectResponse = Out<typeof rejectResponse>;
export type CancelResponse = Out<typeof cancelResponse>;
export type RunMessageResponse = Out<typeof runMessageResponse>;
export type EventPage = Out<typeof eventPageResponse>;
export type Metrics = Out<typeof metricsResponse>;
export type DecisionList = Out<typeof decisionListResponse>;
export type TraceChain = Out<typeof traceResponse>;
export type DiffResponse = Out<typeof diffResponse>;
export type ChecksResponse = Out<typeof checksResponse>;
export type FindingsResponse = Out<typeof findingsResponse>;
export type TranscriptSearch = Out<typeof transcriptSearchResponse>;
export type StreamData = Out<typeof streamData>;
export type ReplayTruncatedData = Out<typeof replayTruncatedData>;
export type StreamItem = Out<typeof streamItem>;
export type AgentList = Out<typeof agentListResponse>;
export type VersionRef = Out<typeof versionRefSchema>;
export type CheckView = Out<typeof checkViewSchema>;
export type VerdictView = Out<typeof verdictViewSchema>;
export type FindingView = Out<typeof findingViewSchema>;
export type DiffFile = Out<typeof diffFileSchema>;
export type DiffHunk = DiffFile['hunks'][number];
export type DiffLine = DiffHunk['lines'][number];
export type FileStatus = DiffFile['status'];
