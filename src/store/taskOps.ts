/**
 * The Store's task repository in three parts: records (create, read, edit, status changes by a
 * person), claims (the scheduler's claim, leases and the claimer's fenced moves) and gates
 * (approve, reject, the merge ledger). Every status change appends its event in the same
 * transaction as the change.
 */
import type { TaskEdit, TaskInput } from '../core/schemas.js';
import type { TaskStatus } from '../core/status.js';
import type { Gate, Task } from '../core/types.js';
import type { DBAdapter, Queryable, TransactionOptions } from './db.js';
import { advanceClaimed, claimableStamps, claimAndRecord, expireClaims, failClaim, heartbeatClaim, leaseEndsInMs, listClaimable, releaseIdleClaims, renewOwnedLeases, type ClaimDecision, type Fence, type TakeOver } from './ops/claim.js';
import { claimBest, type ClaimBestOptions } from './ops/claimBest.js';
import { claimBestPg } from './ops/claimBestPg.js';
import { createTask } from './ops/createTask.js';
import { decomposeTask, type SubtaskSpec } from './ops/decompose.js';
import { editTask } from './ops/editTask.js';
import { autoApprovable } from './ops/autoApproval.js';
import { appendEvent, type NewEvent } from './ops/events.js';
import { approveGate, rejectGate, type LineComment } from './ops/gates.js';
import { assertActive } from './ops/projects.js';
import { countTasks, findTask, getTask, listTasks, taskRow, tasksByIds, type TaskFilter } from './ops/getTask.js';
import { cancelTask, hasSubtasks, retryWithSubtasks, settledParentIds } from './ops/taskTree.js';
import { backToMerging, freshVersion, parkedWhileMerging, takeResolution } from './ops/conflictRetry.js';
import { forgetMergeCheck } from './ops/forgetMergeCheck.js';
import { transitionTask, type TransitionFields } from './ops/transitionTask.js';
import { retryToReady } from './ops/retryToReady.js';
import { supersededVersions } from './ops/supersededVersions.js';

/** What the task operations need from the Store: its database, its transaction helper and its clock. */
export interface TaskOpsContext {
  db: DBAdapter;
  tx: <T>(label: string, fn: (q: Queryable, now: number) => Promise<T>, options?: TransactionOptions) => Promise<T>;
  clock: () => number;
}

function statusEvent(before: Pick<Task, 'status'>, after: Task, extra: Record<string, unknown> = {}): NewEvent {
  return { projectId: after.projectId, taskId: after.id, type: 'task.status', payload: { from: before.status, to: after.status, ...extra } };
}

/** Reads of tasks, no transaction. */
export function taskReads({ db }: Pick<TaskOpsContext, 'db'>) {
  return {
    get: (id: string) => getTask(db, id),
    /** The task without its approvals (ops/getTask.ts taskRow): for the daemon's decisions. */
    row: (id: string) => taskRow(db, id),
    find: (id: string) => findTask(db, id),
    list: (filter?: TaskFilter) => listTasks(db, filter),
    /** How many tasks the filter matches, all pages together. */
    count: (filter?: TaskFilter) => countTasks(db, filter),
    /** Every task among `ids`, however many (list's `ids` takes at most 1,000). */
    byIds: (ids: Iterable<string>) => tasksByIds(db, ids),
    superseded: (ids: readonly string[], projectId?: string) => supersededVersions(db, ids, projectId),
    /** Parents waiting for subtasks that are all over (ops/taskTree.ts). */
    settledParents: () => settledParentIds(db),
  };
}

export function taskRecords({ tx }: TaskOpsContext) {
  return {
    create: (input: TaskInput) =>
      tx('tasks.create', async (q, now) => {
        const task = await createTask(q, input, now);
        await appendEvent(q, { projectId: task.projectId, taskId: task.id, type: 'task.created', payload: { title: task.title } }, now);
        return task;
      }),
    edit: (id: string, edit: TaskEdit) =>
      tx('tasks.edit', async (q, now) => {
        const task = await editTask(q, id, edit, now);
        await appendEvent(q, { projectId: task.projectId, taskId: id, type: 'task.edited', payload: { fields: Object.keys(edit) } }, now);
        return task;
      }),
    transition: (id: string, to: TaskStatus, opts: { from?: TaskStatus; fields?: TransitionFields; reason?: string; traceId?: string } = {}) =>
      tx('tasks.transition', async (q, now) => {
        const { before, after } = await transitionTask(q, { id, to, from: opts.from, fields: opts.fields, now });
        await appendEvent(q, { ...statusEvent(before, after, opts.reason ? { reason: opts.reason } : {}), traceId: opts.traceId ?? null }, now);
        return after;
      }),
    /**
     * A person cancels: the task and every unfinished subtask below it (ops/taskTree.ts), each with its status
     * event, in one transaction. Answers the task and the subtasks cancelled with it.
     */
    cancel: (id: string, opts: { from?: TaskStatus; reason: string }) =>
      tx('tasks.cancel', async (q, now) => {
        const { task, subtasks } = await cancelTask(q, { id, from: opts.from, now });
        await appendEvent(q, statusEvent(task.before, task.after, { reason: opts.reason }), now);
        for (const s of subtasks) await appendEvent(q, statusEvent(s.before, s.after, { reason: `cancelled with task ${id}: ${opts.reason}`, cancelledWith: id }), now);
        return { task: await getTask(q, id), subtasks: subtasks.map((s) => s.after) };
      }),
    /**
     * A person retries: back to ready, the backoff baseline reset to the attempts so far. Work parked while
     * merging (a dirty checkout, a before:merge veto, a missing branch) goes back to merging instead: its
     * change was reviewed and approved, and only the merge is tried again (ready would run the agent anew).
     * A decomposed parent goes back to waiting_children and its cancelled subtasks to ready (ops/taskTree.ts):
     * ready would execute its approved plan as one task. `commit`: a merge conflict resolved by hand on the
     * branch, merged as that commit; `fresh`: the next version, run from the current main (ops/conflictRetry.ts).
     */
    retry: (id: string, from: TaskStatus, opts: { commit?: string; fresh?: boolean; who?: string } = {}) =>
      tx('tasks.retry', async (q, now) => {
        await assertActive(q, (await taskRow(q, id)).projectId, 'no task can be retried in it');
        if (opts.fresh) {
          const { old, before, next } = await freshVersion(q, { id, who: opts.who ?? 'human', now });
          await appendEvent(q, statusEvent(before, old, { reason: 'retry from the current main', who: opts.who ?? 'human', nextVersion: next.id }), now);
          await appendEvent(q, { projectId: next.projectId, taskId: next.id, type: 'task.created', payload: { title: next.title, version: next.version, parentVersionId: old.id } }, now);
          return next;
        }
        if (opts.commit !== undefined) {
          const { before, after } = await takeResolution(q, { id, commit: opts.commit, now });
          await appendEvent(q, statusEvent(before, after, { reason: 'retry the merge with the conflict resolved by hand', commit: opts.commit, who: opts.who ?? 'human' }), now);
          return after;
        }
        if (await hasSubtasks(q, id)) {
          const { task, subtasks } = await retryWithSubtasks(q, { id, from, now });
          await appendEvent(q, statusEvent(task.before, task.after, { reason: 'retry with its subtasks' }), now);
          for (const s of subtasks) await appendEvent(q, statusEvent(s.before, s.after, { reason: `retried with task ${id}`, retriedWith: id }), now);
          return getTask(q, id);
        }
        if (from === 'needs_attention' && (await parkedWhileMerging(q, id))) {
          const { before, after } = await backToMerging(q, { id, now });
          await appendEvent(q, statusEvent(before, after, { reason: 'retry the merge' }), now);
          return after;
        }
        const { before, after, reason } = await retryToReady(q, { id, from, now }); // a plan never approved is cleared
        await appendEvent(q, statusEvent(before, after, { reason }), now);
        return getTask(q, id);
      }),
  };
}

export function taskClaims({ db, tx, clock }: TaskOpsContext) {
  return {
    claimable: (opts: { projectId?: string; limit?: number } = {}) => listClaimable(db, { ...opts, now: clock() }),
    claimableStamps: (limit?: number) => claimableStamps(db, { now: clock(), limit }),
    /** ready → queued for `owner`, with its event and (from a scheduler) its decision, in one transaction. */
    claim: (id: string, owner: string, leaseMs: number, decision?: ClaimDecision) =>
      tx('tasks.claim', (q, now) => claimAndRecord(q, { id, owner, leaseMs, now, decision })),
    /**
     * Up to `max` of a ranked slice, best first, skipping rows other claimers hold (ops/claimBest.ts).
     * PostgreSQL's form is one statement, run without BEGIN and COMMIT around it.
     */
    claimBest: (opts: Omit<ClaimBestOptions, 'now'>) =>
      db.dialect === 'postgres'
        ? tx('tasks.claimBest', (q, now) => claimBestPg(q, { ...opts, now }), { oneStatement: true })
        : tx('tasks.claimBest', (q, now) => claimBest(q, { ...opts, now })),
    heartbeat: (f: Omit<Fence, 'now'>, leaseMs: number) => heartbeatClaim(db, { ...f, leaseMs, now: clock() }),
    /** Until the task's lease ends (negative: ended), by the lease clock (the database's on PostgreSQL); null: none. */
    leaseEndsIn: (id: string) => leaseEndsInMs(db, { id, now: clock() }),
    /** Expired claims back to ready, or (with `takeOver`) taken over where their stage allows (ops/claim.ts). */
    expireClaims: (takeOver?: TakeOver) => tx('tasks.expireClaims', (q, now) => expireClaims(q, { now, takeOver })),
    /** A stopping daemon's tasks with no run in flight: their leases end now, with an event each (ops/claim.ts). */
    releaseIdleClaims: (owner: string) => tx('tasks.releaseIdleClaims', (q, now) => releaseIdleClaims(q, { owner, now })),
    renewOwnedLeases: (owner: string, leaseMs: number) => renewOwnedLeases(db, { owner, leaseMs, now: clock() }),
    /** A fenced transition by the claimer; `also` are events that go with it (in the same transaction). */
    advance: (f: Omit<Fence, 'now'>, from: TaskStatus, to: TaskStatus, fields?: TransitionFields, also: readonly NewEvent[] = []) =>
      tx('tasks.advance', async (q, now) => {
        const won = await advanceClaimed(q, { ...f, now, from, to, fields });
        if (won) {
          await appendEvent(q, statusEvent({ status: from }, await taskRow(q, f.id), { owner: f.owner, attempt: f.attempt }), now);
          for (const e of also) await appendEvent(q, e, now);
        }
        return won;
      }),
    fail: (f: Omit<Fence, 'now'>, error: string, backoffMs: number) =>
      tx('tasks.fail', async (q, now) => {
        const before = await taskRow(q, f.id);
        const won = await failClaim(q, { ...f, now, error, backoffMs });
        if (won) await appendEvent(q, statusEvent(before, await taskRow(q, f.id), { error, backoffMs }), now);
        return won;
      }),
  };
}

export function taskGates({ db, tx }: TaskOpsContext) {
  return {
    /** The tasks at a gate their project's auto-approval applies to (reached after it took effect), with its wait. */
    autoApprovable: () => autoApprovable(db),
    /**
     * Approves a gate. Approving a plan whose result holds two or more
     * subtasks creates them as children first, so the parent waits for them.
     * `from`: where the decision was made (the API's caller), kept in its event for the record. `commit`: at
     * exec_review, the commit of the change the person looked at, kept in the event too; another reviewed
     * commit now is refused (STALE_REVIEW) and nothing is written.
     */
    approve: (id: string, gate: Gate, who: string, reason: string | null = null, from?: Record<string, unknown>, commit?: string) =>
      tx('tasks.approve', async (q, now) => {
        const before = await getTask(q, id);
        const subtasks = (before.result?.subtasks ?? []) as SubtaskSpec[];
        const existing = await listTasks(q, { parentId: id, limit: 1 });
        if (gate === 'plan_review' && before.status === 'plan_review' && subtasks.length >= 2 && !existing.length) {
          const children = await decomposeTask(q, before, subtasks, now);
          for (const c of children) await appendEvent(q, { projectId: c.projectId, taskId: c.id, type: 'task.created', payload: { title: c.title, parentId: id } }, now);
        }
        const { task } = await approveGate(q, { id, gate, who, reason, now, ...(commit === undefined ? {} : { commit }) });
        // Where the decision came from is `origin`: a status event's `from` is the status it leaves (as `from` it hid it).
        // Its reason is said with it (the serve terminal prints it): an auto-approval's says it was no person's.
        await appendEvent(q, statusEvent(before, task, { gate, decision: 'approve', who, ...(reason ? { reason } : {}), ...(commit ? { commit } : {}), ...(from ? { origin: from } : {}) }), now);
        return task;
      }),
    reject: (id: string, gate: Gate, who: string, reason: string, comments: LineComment[] = [], from?: Record<string, unknown>) =>
      tx('tasks.reject', async (q, now) => {
        const before = await getTask(q, id);
        const { old, next } = await rejectGate(q, { id, gate, who, reason, now, comments });
        await appendEvent(q, statusEvent(before, old, { gate, decision: 'reject', who, reason, nextVersion: next.id, ...(comments.length ? { comments } : {}), ...(from ? { origin: from } : {}) }), now);
        await appendEvent(q, { projectId: next.projectId, taskId: next.id, type: 'task.created', payload: { title: next.title, version: next.version, parentVersionId: old.id } }, now);
        return { old, next };
      }),
    /**
     * The merge ledger, the move to done and its event, in one transaction (once per task). `previousSha`: main
     * before the merge (the change stays showable once its branch is gone); `settingsFiles`: what the merge changed
     * that steers later runs (core/steering.ts STEERING_PATHS: `.maestro/` hooks and checks, `.workflow/`
     * knowledge), recorded as a `project.settings_files` event naming the task; `runsElsewhere`: what it changed that
     * runs outside Maestro (core/runsElsewhere.ts: CI, git hooks, package scripts), a `project.runs_elsewhere` event.
     */
    /** A passed merge check whose commit no clone can land is forgotten: the merge is checked again (ops/forgetMergeCheck.ts). Null: left alone. */
    forgetMergeCheck: (id: string, commitSha: string, reason: string) => tx('tasks.forgetMergeCheck', (q, now) => forgetMergeCheck(q, { id, commitSha, reason, now })),
    recordMerge: (m: { taskId: string; projectId: string; branch: string; sha: string | null; how: string; previousSha?: string | null; settingsFiles?: string[]; runsElsewhere?: string[]; title?: string }) =>
      tx('tasks.recordMerge', async (q, now) => {
        await q.run(`INSERT INTO merges (task_id, project_id, branch, commit_sha, merged_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id) DO NOTHING`, [m.taskId, m.projectId, m.branch, m.sha, now]);
        const { before, after } = await transitionTask(q, { id: m.taskId, from: 'merging', to: 'done', now });
        await appendEvent(q, statusEvent(before, after, { merged: { branch: m.branch, sha: m.sha, how: m.how, ...(m.previousSha ? { previousSha: m.previousSha } : {}) } }), now);
        const who = `the agent of task ${m.taskId}${m.title ? ` (${m.title})` : ''}`;
        for (const [type, files] of [['project.settings_files', m.settingsFiles], ['project.runs_elsewhere', m.runsElsewhere]] as const) {
          if (files?.length) await appendEvent(q, { projectId: m.projectId, taskId: m.taskId, type, payload: { files, who, from: `merge of ${m.branch}`, sha: m.sha } }, now);
        }
        return after;
      }),
  };
}
