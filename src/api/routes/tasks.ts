/** /api/tasks: create, list, show (with the version chain), edit, cancel, retry, approve / reject a gate, inject, reply. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isMaestroError, MaestroError } from '../../core/errors.js';
import { reviewedCommit } from '../../core/reviewed.js';
import { momentaryLock } from '../../daemon/mergeLock.js';
import { goneAdvice } from '../../daemon/mergeTrain.js';
import { checkoutGone } from '../../daemon/projectFolder.js';
import { aheadOfReview } from '../../daemon/mergeCars.js';
import { baseBranchOf, remoteOf, workRepoOf } from '../../daemon/repos.js';
import { perProjectSlots } from '../../daemon/scheduler.js';
import { assertMainCheckout, assertMergeable } from '../../git/merge.js';
import { taskEditSchema, taskInputSchema, whoSchema } from '../../core/schemas.js';
import { IN_FLIGHT_STATUSES, TERMINAL_STATUSES } from '../../core/status.js';
import { summarizeTask } from '../../core/taskSummary.js';
import { GATES, type Project, type Task } from '../../core/types.js';
import type { Store } from '../../store/store.js';
import type { ApiDeps } from '../deps.js';
import { requestOrigin } from '../origin.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { providerFix } from '../../daemon/providerCheck.js';
import { loadProjectConfig } from '../../executor/projectConfig.js';
import { checkApprovedCommit, checkComments, gateFor, reviewContext, gateFiles } from './review.js';
import { baseMoved } from './baseMoved.js';
import { diffGateRefusal } from './diffGateRefusal.js';
import { checkResolution, mergeConflictPark } from './mergeConflictPark.js';
import { movedFrom, resolveCommit, versionChain, versionRefs } from './reviewData.js';
import { idParam, taskListQuery } from './schemas.js';
import { waitingForRun } from './waitingForRun.js';
import { knowledgeElsewhere } from './knowledgeElsewhere.js';
import { mergeCheckAndTurn, mergeChecksOf } from './mergeCheckNow.js';
import { cancelResponse, rejectResponse, runMessageResponse, taskDetailResponse, taskListResponse, taskResponse, type HealthResponse, type TaskDetail } from '../wire/responses.js';

/** Who acted: one line (whoSchema, shared with the project routes). */
const who = whoSchema;
const gateBody = z.object({
  gate: z.enum(GATES).optional(),
  reason: z.string().trim().max(10_000).optional(),
  who,
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/, "a commit is its full sha, 40 lowercase hex digits (the diff's head)")
    .optional()
    .describe('at exec_review: the commit of the change you looked at (GET /api/tasks/:id/diff `head`); refused with STALE_REVIEW when another is waiting now'),
}).strict();
const lineComment = z.object({
  file: z.string().min(1).max(4096),
  line: z.number().int().positive(),
  side: z.enum(['new', 'old']).default('new'),
  text: z.string().trim().min(1, 'a comment needs text').max(10_000),
}).strict();
const rejectBody = z.object({
  gate: z.enum(GATES).optional(),
  reason: z.string().trim().min(1, 'a rejection needs a reason').max(10_000),
  who,
  comments: z.array(lineComment).max(500).default([]),
}).strict();
const messageBody = z.object({ message: z.string().trim().min(1).max(100_000), who }).strict();
const cancelBody = z.object({ reason: z.string().trim().max(10_000).optional(), who }).strict();
const retryBody = z.object({
  who,
  fresh: z.boolean().optional().describe('run the task again from the current main: a new version in ready (its plan kept), this one superseded; for a task that needs attention'),
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/, 'a commit is its full sha, 40 lowercase hex digits (git rev-parse HEAD)')
    .optional()
    .describe("for a task parked by a merge conflict: the commit on its branch that resolved it by hand (main merged in); the train merges it, with no conflict run"),
}).strict().refine((b) => !(b.fresh && b.commit !== undefined), { message: '--fresh runs the task again from main; --commit merges your resolution: give one of them', path: ['fresh'] });
/** Request bodies as the web board's client types them (type-only import: the browser sends what this validates). */
export type GateBody = z.input<typeof gateBody>;
export type RejectBody = z.input<typeof rejectBody>;
export type MessageBody = z.input<typeof messageBody>;
export type CancelBody = z.input<typeof cancelBody>;
export type RetryBody = z.input<typeof retryBody>;

export function registerTaskRoutes(app: FastifyInstance, doc: OpenApiDoc, deps: ApiDeps): void {
  const { store, control } = deps;
  const review = reviewContext(deps);
  const tags = ['tasks'];

  defineRoute(app, doc, { method: 'GET', url: '/api/tasks', summary: 'List tasks (filters: projectId, status (comma list), parentId, q in the title; view=board for slim rows)', tags, query: taskListQuery, response: taskListResponse }, async ({ query }) => {
    return listPage(store, deps.self, query);
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/tasks', summary: 'Create a task (refused while its project has no usable agent provider)', tags, body: taskInputSchema, response: taskResponse, status: 201 }, async ({ body }) => {
    await assertRunnable(store, deps, body.projectId);
    return { task: await store.tasks.create(body) };
  });

  defineRoute(app, doc, { method: 'GET', url: '/api/tasks/:id', summary: 'Show a task with its approvals, runs and last scheduler decision', tags, params: idParam, response: taskDetailResponse }, async ({ params, reply }) => {
    const task = await store.tasks.get(params.id);
    const project = await store.projects.get(task.projectId);
    const runs = await store.runs.list({ taskId: task.id });
    const [decision] = await store.decisions.list({ taskId: task.id, limit: 1 });
    const children = await store.tasks.list({ parentId: task.id });
    const chain = await versionChain(store, task);
    const versions = versionRefs(chain);
    if (runs.length) reply.header('x-trace-id', runs[runs.length - 1]!.traceId);
    return {
      task, runs, children, lastDecision: decision ?? null, versions, question: await pendingQuestion(store, task), baseBranch: baseBranchOf(project),
      baseMoved: await baseMoved(deps.home, project, task), feedbackAt: rejectedAt(chain, task), mergeBlocked: await mergeBlocked(deps.home, project, task), ...(await gateFiles(review, task)),
      ...(await whyNotStarted(store, deps.slots, task)), heldBack: heldBack(deps, task), diffGate: await diffGateRefusal(store, task, runs),
      mergeConflict: await mergeConflictPark(deps, task, runs), claimedElsewhere: await claimedElsewhere(store, deps.slots?.owner, task),
      waitingForRun: await waitingForRun(store, deps.self, task, runs),
      knowledgeElsewhere: await knowledgeElsewhere(store, deps.self?.name, deps.knowledge, task, runs), ...(await mergeCheckAndTurn(store, deps.self, task, runs)),
    };
  });

  defineRoute(app, doc, { method: 'PATCH', url: '/api/tasks/:id', summary: 'Edit a task (409 while a run is in flight)', tags, params: idParam, body: taskEditSchema, response: taskResponse }, async ({ params, body }) => ({
    task: await store.tasks.edit(params.id, body),
  }));

  defineRoute(app, doc, { method: 'POST', url: '/api/tasks/:id/cancel', summary: 'Cancel a task and its unfinished subtasks (their running workers are stopped)', tags, params: idParam, body: cancelBody, response: cancelResponse }, async ({ params, body }) => {
    const task = await store.tasks.get(params.id);
    if (TERMINAL_STATUSES.includes(task.status) || task.status === 'cancelled') {
      throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status}; there is nothing to cancel.`);
    }
    const cancelled = await store.tasks.cancel(task.id, { from: task.status, reason: body.reason ?? `cancelled by ${body.who}` });
    return { task: cancelled.task, subtasksCancelled: cancelled.subtasks.map((s) => ({ id: s.id, title: s.title })) };
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/tasks/:id/retry', summary: 'Retry a task that needs attention or was cancelled (a decomposed parent goes back to waiting_children, its cancelled subtasks back to ready); fresh: a new version from the current main; commit: merge a merge conflict resolved by hand', tags, params: idParam, body: retryBody, response: taskResponse }, async ({ params, body }) => ({
    task: await retryTask(store, deps, params.id, body),
  }));

  // A decision's event says where it came from (address, client): on a team's database, which board or CLI it was.
  defineRoute(app, doc, { method: 'POST', url: '/api/tasks/:id/approve', summary: 'Approve the gate the task waits at (gate optional: the one it waits at); at exec_review, commit ties the approval to the change looked at', tags, params: idParam, body: gateBody, response: taskResponse }, async ({ params, body, req }) => {
    const task = await store.tasks.get(params.id);
    const gate = gateFor(task, body.gate);
    if (body.commit !== undefined) await checkApprovedCommit(review, task, gate, body.commit);
    return { task: await store.tasks.approve(task.id, gate, body.who, body.reason ?? null, requestOrigin(req), body.commit) };
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/tasks/:id/reject', summary: 'Reject the gate with a reason and optional line comments: a new task version carries them as feedback', tags, params: idParam, body: rejectBody, response: rejectResponse }, async ({ params, body, req }) => {
    const task = await store.tasks.get(params.id);
    const gate = gateFor(task, body.gate);
    if (task.status === gate) await checkComments(review, task, body.comments);
    const { old, next } = await store.tasks.reject(task.id, gate, body.who, body.reason, body.comments, requestOrigin(req));
    return { task: old, next };
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/tasks/:id/inject', summary: "Append an instruction to the running agent's next turn", tags, params: idParam, body: messageBody, response: runMessageResponse, status: 202 }, async ({ params, body }) => {
    const task = await store.tasks.get(params.id);
    return control.inject(task, body.message, body.who);
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/tasks/:id/reply', summary: "Answer the agent's clarifying question (the task must be awaiting_input)", tags, params: idParam, body: messageBody, response: runMessageResponse, status: 202 }, async ({ params, body }) => {
    const task = await store.tasks.get(params.id);
    if (task.status !== 'awaiting_input') throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status}, not awaiting_input: there is no question to answer.`);
    return control.reply(task, body.message, body.who);
  });
}

/** A person's retry: of a task that needs attention or was cancelled; `commit` checked against its branch first. */
async function retryTask(store: Store, deps: ApiDeps, id: string, body: z.output<typeof retryBody>): Promise<Task> {
  const task = await store.tasks.get(id);
  if (task.status !== 'needs_attention' && task.status !== 'cancelled') {
    throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status}; only a task that needs attention or was cancelled can be retried.`);
  }
  // Its next run, or the merge it retries, would fail on the same settings at once (an archived project's refusal is the store's).
  const project = await store.projects.get(task.projectId);
  if (project.archivedAt === null) assertSettingsLoad(deps, project, 'nothing was retried');
  if (body.commit !== undefined) await checkResolution(store, task, body.commit);
  return store.tasks.retry(task.id, task.status, { fresh: body.fresh, commit: body.commit, who: body.who });
}

/** When the rejection a version carries as feedback was made: the previous version's last reject decision (null when it carries none). */
function rejectedAt(chain: Task[], task: Task): number | null {
  if (task.feedbackSource?.kind === 'fresh' || (!task.feedbackSource && !task.feedback)) return null;
  const previous = chain.find((t) => t.id === task.parentVersionId);
  return previous?.approvals.filter((a) => a.decision === 'reject').at(-1)?.at ?? null;
}

/** The agent's question a task awaiting input waits on: its newest run.clarify event. */
async function pendingQuestion(store: Store, task: Task): Promise<{ text: string; clarifyId: string | null; askedAt: number } | null> {
  if (task.status !== 'awaiting_input') return null;
  const asked = (await store.events.list({ taskId: task.id, type: 'run.clarify', limit: 1000 })).events.at(-1);
  const text = asked?.payload.question;
  if (!asked || typeof text !== 'string') return null;
  return { text, clarifyId: typeof asked.payload.clarifyId === 'string' ? asked.payload.clarifyId : null, askedAt: asked.at };
}

type TaskRef = { id: string; title: string; status: string };
const ref = (t: TaskRef): TaskRef => ({ id: t.id, title: t.title, status: t.status });

/**
 * A ready task's dependencies that will not finish by themselves: cancelled, waiting for a person, or a
 * superseded version (a dependency stored before ids were taken to mean the newest version: it waited for
 * good). The scheduler passes over such a task without a word; the person must act on the dependency (retry
 * it), point the task at its newest version, or drop it from the task's deps.
 */
const STUCK: ReadonlySet<string> = new Set(['cancelled', 'needs_attention', 'superseded']);

/**
 * Why a ready task does not start, for its detail: the dependencies it is stuck on (STUCK), those still on their way
 * (one at a gate or asking a question waits for a person: the CLI says so), and, when every
 * dependency is done, the tasks that hold its project's places on this daemon (maxConcurrentRunsPerProject; a
 * task waiting for an answer keeps its place until the reply). Without the latter such a task stayed ready with
 * no word while two questions were open (a trial). Its dependencies are read once for both.
 */
async function whyNotStarted(store: Store, slots: ApiDeps['slots'], task: Task): Promise<{ stuckOn: TaskRef[]; waitingOn: TaskRef[]; waitingForSlot: { limit: number; held: TaskRef[] } | null }> {
  if (task.status !== 'ready') return { stuckOn: [], waitingOn: [], waitingForSlot: null };
  const deps = await Promise.all(task.deps.map((id) => store.tasks.find(id)));
  const stuckOn = deps.flatMap((d) => (d && STUCK.has(d.status) ? [ref(d)] : []));
  const waitingOn = deps.flatMap((d) => (d && d.status !== 'done' && !STUCK.has(d.status) ? [ref(d)] : []));
  if (!slots || deps.some((d) => d?.status !== 'done')) return { stuckOn, waitingOn, waitingForSlot: null };
  const project = await store.projects.get(task.projectId);
  const inFlight = await store.tasks.list({ projectId: task.projectId, status: IN_FLIGHT_STATUSES, limit: 10_000 });
  if (perProjectSlots(inFlight, [project], slots.owner, slots.perProject)(project.id) > 0) return { stuckOn, waitingOn, waitingForSlot: null };
  const held = inFlight.filter((t) => t.claimedBy === slots.owner || (t.claimedBy === null && !remoteOf(project)));
  return { stuckOn, waitingOn, waitingForSlot: { limit: slots.perProject, held: held.map(ref) } };
}

/**
 * For a task in flight that another daemon on the database holds: which one, when it was last heard from and when
 * its lease ends. That daemon's terminal and log are on another machine: without this, a person here saw
 * "executing" for a minute after it stopped, with no word of why nothing moved (a trial).
 */
async function claimedElsewhere(store: Store, owner: string | undefined, task: Task): Promise<TaskDetail['claimedElsewhere']> {
  if (!task.claimedBy || task.claimedBy === owner || !IN_FLIGHT_STATUSES.includes(task.status)) return null;
  const heard = await store.daemons.lastHeard(task.claimedBy);
  // By the lease's own clock (the database's on PostgreSQL): this host's may be minutes off the one that stamped it.
  return { daemon: task.claimedBy, lastHeardMsAgo: heard, leaseEndsInMs: task.leaseExpiresAt === null ? null : await store.tasks.leaseEndsIn(task.id) };
}

/**
 * This daemon's conditions (GET /api/health) that hold a task back: one of the whole daemon (a full disk, a read-only
 * home, a newer schema) pauses every claim, so it holds a ready task; a shared remote it cannot reach holds its
 * project's tasks, ready or claimed (a claimed one waits with its claim), and their merges. A missing project folder
 * holds nothing back (it pauses no claim; the merge sends approved work to a person), so it is not said here.
 */
function heldBack(deps: ApiDeps, task: Task): HealthResponse['conditions'] {
  const claimed = IN_FLIGHT_STATUSES.includes(task.status) && task.status !== 'awaiting_input';
  if (task.status !== 'ready' && !claimed) return [];
  return (deps.health?.().conditions ?? []).filter((c) => (c.code === 'REMOTE_UNREACHABLE' ? c.projectId === task.projectId : c.projectId === undefined && task.status === 'ready'));
}

/**
 * Refuses a task its project could not run: no usable agent provider, or project settings (`.maestro/config.json`
 * on main) that every run would refuse, said now rather than at the run's start (trial 3: created fine, then each run
 * failed on the file). An archived project takes no task whatever its provider: the store's refusal
 * (PROJECT_ARCHIVED) is what to say, so nothing else is looked at.
 */
async function assertRunnable(store: Store, deps: ApiDeps, projectId: string): Promise<void> {
  const project = await store.projects.get(projectId);
  if (project.archivedAt !== null) return;
  const problem = deps.providerProblem?.(project) ?? null;
  if (problem) throw new MaestroError('CONFIG_INVALID', providerFix(project, problem), { details: { projectId: project.id, problem } });
  assertSettingsLoad(deps, project, 'no task was created');
}

/**
 * Refuses what would start on project settings every run and merge refuses. A retry needs no agent when it only
 * merges again, so it is checked for this alone. A shared remote's settings are read from this daemon's clone, once
 * it has one.
 */
function assertSettingsLoad(deps: ApiDeps, project: Project, unchanged: string): void {
  if (remoteOf(project) && !deps.home) return;
  const repo = workRepoOf(deps.home ?? '', project);
  if (!existsSync(join(repo, '.git'))) return;
  try {
    loadProjectConfig(repo);
  } catch (err) {
    if (!isMaestroError(err, 'CONFIG_INVALID')) throw err;
    throw new MaestroError('CONFIG_INVALID', `Project ${project.name} cannot run tasks: ${err.message.replace(/\.+$/, '')}. Fix it on ${baseBranchOf(project)} and commit it; ${unchanged}.`, { details: { projectId: project.id, ...(err.details ?? {}) } });
  }
}

/**
 * At exec_review, what would stop the merge an approval starts: the project's own checkout gone, locked (its
 * index.lock, for longer than a git at work holds it), not clean on its main branch, holding untracked files the task's branch adds (git would refuse to overwrite them), or git-ignored ones where it puts its own (git would overwrite them; the merge stops); a
 * shared remote's clone is the daemon's, always clean, and what stops the merge there is the remote's branch holding
 * commits the review never saw (aheadAtGate). Said before the person approves, not after. One git
 * process, a second only when the checkout has untracked files, and ignoredInTheWay's (one or two).
 */
async function mergeBlocked(home: string | undefined, project: Project, task: Task): Promise<string | null> {
  if (task.status !== 'exec_review') return null;
  const remote = remoteOf(project);
  if (remote) return home ? aheadAtGate(home, project, task) : null;
  const gone = checkoutGone(project);
  if (gone) return `${gone}: put it back`;
  const branch = typeof task.result?.branch === 'string' ? task.result.branch : null;
  const reviewed = reviewedCommit(task);
  try {
    // Deleted since its review: the merge would stop on it, so the gate says it first, with the way back.
    if (branch && reviewed && !(await resolveCommit(project.repoPath, `refs/heads/${branch}`))) return goneAdvice(project.repoPath, branch, reviewed);
    if (branch) await assertMergeable(project.repoPath, baseBranchOf(project), branch);
    else await assertMainCheckout(project.repoPath, baseBranchOf(project));
    // Worktrees share the branches: one moved after its review would be refused at the merge (mergeTrain.ts).
    const moved = branch && reviewed ? await movedFrom(project.repoPath, branch, reviewed) : null;
    return moved?.message ?? null;
  } catch (err) {
    // A lock taken just now is a git at work (an editor refreshing its view): the merge waits for it (daemon/mergeLock.ts).
    if (isMaestroError(err, 'REPO_LOCKED') && momentaryLock(err)) return null;
    if (isMaestroError(err, 'DIRTY_MAIN') || isMaestroError(err, 'REPO_LOCKED')) return err.message;
    return null; // not a repository any more, git missing: the merge says so itself
  }
}

/**
 * On a shared remote, the merge reads the task's branch there (mergeCars.ts): one that holds commits on top of the
 * approved commit parks the task, naming them. The gate says the same before the approval, from the branch as this
 * daemon's clone last fetched it (no fetch: a read of one ref, and a git log when it moved).
 */
async function aheadAtGate(home: string, project: Project, task: Task): Promise<string | null> {
  const branch = typeof task.result?.branch === 'string' ? task.result.branch : null;
  if (!branch) return null;
  const clone = workRepoOf(home, project);
  const tip = await resolveCommit(clone, `refs/remotes/origin/${branch}`).catch(() => null);
  return tip ? aheadOfReview(project, clone, 'origin', task, branch, tip, 'gate').catch(() => null) : null;
}

/** One page of GET /api/tasks, with how many tasks match in all and where the next page starts. */
async function listPage(store: Store, self: ApiDeps['self'], query: z.output<typeof taskListQuery>) {
  const filter = { projectId: query.projectId, status: query.status, parentId: query.parentId };
  let tasks = await store.tasks.list({ ...filter, limit: query.limit, offset: query.offset });
  // A page short of the limit that holds something (or starts at 0) is the last: no count needed.
  const read = tasks.length;
  const matched = read < query.limit && (read > 0 || query.offset === 0) ? query.offset + read : await store.tasks.count(filter);
  // q filters the page read, so the next page starts after the rows read, not after the ones kept.
  const nextOffset = query.offset + read < matched ? query.offset + read : null;
  if (query.q) {
    const needle = query.q.toLowerCase();
    tasks = tasks.filter((t) => t.title.toLowerCase().includes(needle));
  }
  if (query.view !== 'board') return { tasks, total: query.q ? null : matched, nextOffset };
  const { checks, turns } = await mergeChecksOf(store, self, tasks);
  return { tasks: tasks.map((t) => summarizeTask(t, checks.get(t.id) ?? null, turns.get(t.id) ?? null)), total: query.q ? null : matched, nextOffset };
}
