/**
 * The Store: the repositories over one DBAdapter, with an injected clock.
 * Each repository method is one store operation (src/store/ops/*); the ones
 * that change several rows run in one transaction, and every status change
 * appends its event in the same transaction, so the log never disagrees with
 * the state.
 */
import type { TaskEdit, TaskInput, ProjectInput } from '../core/schemas.js';
import type { TaskStatus } from '../core/status.js';
import type { Gate, MaestroEvent, Project, RunKind, RunStatus, Task } from '../core/types.js';
import type { DBAdapter, Queryable } from './db.js';
import { advanceClaimed, claimableStamps, claimAndRecord, expireClaims, failClaim, heartbeatClaim, listClaimable, renewOwnedLeases, type ClaimDecision, type Fence } from './ops/claim.js';
import { claimBest, type ClaimBestOptions } from './ops/claimBest.js';
import { claimBestPg } from './ops/claimBestPg.js';
import { createTask } from './ops/createTask.js';
import { decomposeTask, type SubtaskSpec } from './ops/decompose.js';
import { editTask } from './ops/editTask.js';
import { appendEvent, appendEventOnce, eventsByIds, lastEventId, listEvents, taskChangesAfter, type NewEvent } from './ops/events.js';
import { listDecisions, recordDecision, type SchedulerDecision } from './ops/decisions.js';
import { approveGate, listApprovals, rejectGate, type LineComment } from './ops/gates.js';
import { findTask, getTask, listTasks, type TaskFilter } from './ops/getTask.js';
import { runDurations, tasksByStatus, usageByProject } from './ops/metrics.js';
import { createProject, getProject, listProjects, updateProjectConfig } from './ops/projects.js';
import { failRunAndTask, type FailRunOptions } from './ops/failRun.js';
import { createRun, finishRun, getRun, listRuns, setOutboxProgress, setRunWorker, startRun } from './ops/runs.js';
import { withFaults, type StoreFaults } from './faults.js';
import { transitionTask, type TransitionFields } from './ops/transitionTask.js';

export type Clock = () => number;

function statusEvent(before: Pick<Task, 'status'>, after: Task, extra: Record<string, unknown> = {}): NewEvent {
  return { projectId: after.projectId, taskId: after.id, type: 'task.status', payload: { from: before.status, to: after.status, ...extra } };
}

export interface StoreOptions {
  /** Tests only: the crash suites' seam between statements (store/faults.ts). */
  faults?: StoreFaults;
}

export function createStore(engine: DBAdapter, clock: Clock = Date.now, options: StoreOptions = {}) {
  const raw = options.faults ? withFaults(engine, options.faults) : engine;
  // Listeners told after every committed write transaction (the daemon's event
  // feed reads new events at once instead of at its next poll).
  // They get the events the transaction appended, to publish them without reading them back.
  const writeListeners = new Set<(events: readonly MaestroEvent[]) => void>();
  const db: DBAdapter = {
    ...raw,
    transaction: async (fn, label) => {
      const events: MaestroEvent[] = [];
      const result = await raw.transaction((q) => fn({ ...q, onEvent: (e) => events.push(e) }), label);
      for (const l of writeListeners) l(events);
      return result;
    },
  };
  const onWrite = (listener: (events: readonly MaestroEvent[]) => void) => {
    writeListeners.add(listener);
    return () => writeListeners.delete(listener);
  };
  const tx = <T>(label: string, fn: (q: Queryable, now: number) => Promise<T>) => db.transaction((q) => fn(q, clock()), label);

  const projects = {
    create: (input: ProjectInput) => tx('projects.create', (q, now) => createProject(q, input, now)),
    get: (idOrName: string) => getProject(db, idOrName),
    list: () => listProjects(db),
    /** Replaces the settings; the `project.config` event's payload describes the change (`describe` sees the settings before it). */
    updateConfig: (idOrName: string, config: Record<string, unknown>, describe?: (before: Project) => Record<string, unknown>) =>
      tx('projects.updateConfig', async (q, now) => {
        const before = await getProject(q, idOrName);
        const project = await updateProjectConfig(q, before.id, config, now);
        await appendEvent(q, { projectId: project.id, type: 'project.config', payload: describe ? describe(before) : { keys: Object.keys(config) } }, now);
        return project;
      }),
  };

  const tasks = {
    create: (input: TaskInput) =>
      tx('tasks.create', async (q, now) => {
        const task = await createTask(q, input, now);
        await appendEvent(q, { projectId: task.projectId, taskId: task.id, type: 'task.created', payload: { title: task.title } }, now);
        return task;
      }),
    get: (id: string) => getTask(db, id),
    find: (id: string) => findTask(db, id),
    list: (filter?: TaskFilter) => listTasks(db, filter),
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
    /** A person retries: back to ready, the backoff baseline reset to the attempts so far. */
    retry: (id: string, from: TaskStatus) =>
      tx('tasks.retry', async (q, now) => {
        const { before, after } = await transitionTask(q, { id, to: 'ready', from, fields: { nextEligibleAt: null }, now });
        await q.run(`UPDATE tasks SET retry_baseline = attempt WHERE id = $1`, [id]);
        await appendEvent(q, statusEvent(before, after, { reason: 'retry' }), now);
        return getTask(q, id);
      }),
    claimable: (opts: { projectId?: string; limit?: number } = {}) => listClaimable(db, { ...opts, now: clock() }),
    claimableStamps: (limit?: number) => claimableStamps(db, { now: clock(), limit }),
    /** ready → queued for `owner`, with its event and (from a scheduler) its decision, in one transaction. */
    claim: (id: string, owner: string, leaseMs: number, decision?: ClaimDecision) =>
      tx('tasks.claim', (q, now) => claimAndRecord(q, { id, owner, leaseMs, now, decision })),
    /** Up to `max` of a ranked slice, best first, skipping rows other claimers hold (ops/claimBest.ts). */
    claimBest: (opts: Omit<ClaimBestOptions, 'now'>) => tx('tasks.claimBest', (q, now) => (q.dialect === 'postgres' ? claimBestPg : claimBest)(q, { ...opts, now })),
    heartbeat: (f: Omit<Fence, 'now'>, leaseMs: number) => heartbeatClaim(db, { ...f, leaseMs, now: clock() }),
    expireClaims: () => tx('tasks.expireClaims', (q, now) => expireClaims(q, { now })),
    renewOwnedLeases: (owner: string, leaseMs: number) => renewOwnedLeases(db, { owner, leaseMs, now: clock() }),
    /** A fenced transition by the claimer; `also` are events that go with it (in the same transaction). */
    advance: (f: Omit<Fence, 'now'>, from: TaskStatus, to: TaskStatus, fields?: TransitionFields, also: readonly NewEvent[] = []) =>
      tx('tasks.advance', async (q, now) => {
        const won = await advanceClaimed(q, { ...f, now, from, to, fields });
        if (won) {
          await appendEvent(q, statusEvent({ status: from }, await getTask(q, f.id), { owner: f.owner, attempt: f.attempt }), now);
          for (const e of also) await appendEvent(q, e, now);
        }
        return won;
      }),
    fail: (f: Omit<Fence, 'now'>, error: string, backoffMs: number) =>
      tx('tasks.fail', async (q, now) => {
        const before = await getTask(q, f.id);
        const won = await failClaim(q, { ...f, now, error, backoffMs });
        if (won) await appendEvent(q, statusEvent(before, await getTask(q, f.id), { error, backoffMs }), now);
        return won;
      }),
    /**
     * Approves a gate. Approving a plan whose result holds two or more
     * subtasks creates them as children first, so the parent waits for them.
     */
    approve: (id: string, gate: Gate, who: string, reason: string | null = null) =>
      tx('tasks.approve', async (q, now) => {
        const before = await getTask(q, id);
        const subtasks = (before.result?.subtasks ?? []) as SubtaskSpec[];
        const existing = await listTasks(q, { parentId: id, limit: 1 });
        if (gate === 'plan_review' && before.status === 'plan_review' && subtasks.length >= 2 && !existing.length) {
          const children = await decomposeTask(q, before, subtasks, now);
          for (const c of children) await appendEvent(q, { projectId: c.projectId, taskId: c.id, type: 'task.created', payload: { title: c.title, parentId: id } }, now);
        }
        const { task } = await approveGate(q, { id, gate, who, reason, now });
        await appendEvent(q, statusEvent(before, task, { gate, decision: 'approve', who }), now);
        return task;
      }),
    reject: (id: string, gate: Gate, who: string, reason: string, comments: LineComment[] = []) =>
      tx('tasks.reject', async (q, now) => {
        const before = await getTask(q, id);
        const { old, next } = await rejectGate(q, { id, gate, who, reason, now, comments });
        await appendEvent(q, statusEvent(before, old, { gate, decision: 'reject', who, reason, nextVersion: next.id, ...(comments.length ? { comments } : {}) }), now);
        await appendEvent(q, { projectId: next.projectId, taskId: next.id, type: 'task.created', payload: { title: next.title, version: next.version, parentVersionId: old.id } }, now);
        return { old, next };
      }),
    /** merging → done with the merge recorded (once per task), in one transaction. */
    /**
     * The merge ledger, the move to done and its event, in one transaction. `previousSha`: main before the merge
     * (the change stays showable once its branch is gone); `settingsFiles`: what the merge changed under `.maestro/`
     * (hooks, checks), recorded as a `project.settings_files` event naming the task.
     */
    recordMerge: (m: { taskId: string; projectId: string; branch: string; sha: string | null; how: string; previousSha?: string | null; settingsFiles?: string[]; title?: string }) =>
      tx('tasks.recordMerge', async (q, now) => {
        await q.run(`INSERT INTO merges (task_id, project_id, branch, commit_sha, merged_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id) DO NOTHING`, [m.taskId, m.projectId, m.branch, m.sha, now]);
        const { before, after } = await transitionTask(q, { id: m.taskId, from: 'merging', to: 'done', now });
        await appendEvent(q, statusEvent(before, after, { merged: { branch: m.branch, sha: m.sha, how: m.how, ...(m.previousSha ? { previousSha: m.previousSha } : {}) } }), now);
        if (m.settingsFiles?.length) {
          await appendEvent(q, { projectId: m.projectId, taskId: m.taskId, type: 'project.settings_files', payload: { files: m.settingsFiles, who: `the agent of task ${m.taskId}${m.title ? ` (${m.title})` : ''}`, from: `merge of ${m.branch}`, sha: m.sha } }, now);
        }
        return after;
      }),
  };

  const runs = {
    create: (opts: { taskId: string; kind: RunKind; model: string | null; traceId: string; attempt: number; id?: string; runDir?: string | null; owner?: string | null }) =>
      tx('runs.create', (q, now) => createRun(q, { ...opts, now })),
    /** Creates the run with its `run.started` event. */
    start: (opts: { taskId: string; kind: RunKind; model: string | null; traceId: string; attempt: number; id?: string; runDir?: string | null; owner?: string | null }) =>
      tx('runs.start', (q, now) => startRun(q, { ...opts, now })),
    /** The daemon gives up on a run: it fails, and its task goes back (ops/failRun.ts). */
    failWithTask: (opts: Omit<FailRunOptions, 'now'>) => tx('runs.failWithTask', (q, now) => failRunAndTask(q, { ...opts, now })),
    setWorker: (id: string, pid: number | null) => setRunWorker(db, id, pid),
    setOutboxProgress: (id: string, offset: number, seq: number) => setOutboxProgress(db, id, offset, seq),
    get: (id: string) => getRun(db, id),
    finish: (opts: { id: string; status: Exclude<RunStatus, 'running'>; inputTokens?: number; outputTokens?: number; costUsd?: number; error?: string | null; model?: string | null }) =>
      tx('runs.finish', (q, now) => finishRun(q, { ...opts, now })),
    list: (filter?: Parameters<typeof listRuns>[1]) => listRuns(db, filter),
  };

  const approvals = {
    list: (filter?: Parameters<typeof listApprovals>[1]) => listApprovals(db, filter),
  };

  const decisions = {
    record: (d: Omit<SchedulerDecision, 'id' | 'at'>) => tx('decisions.record', (q, now) => recordDecision(q, { ...d, at: now })),
    list: (filter?: Parameters<typeof listDecisions>[1]) => listDecisions(db, filter),
  };

  const events = {
    append: (e: NewEvent) => tx('events.append', (q, now) => appendEvent(q, e, now)),
    appendOnce: (e: NewEvent, dedupeKey: string) => tx('events.appendOnce', (q, now) => appendEventOnce(q, e, dedupeKey, now)),
    list: (filter?: Parameters<typeof listEvents>[1]) => listEvents(db, filter),
    byIds: (ids: readonly number[]) => eventsByIds(db, ids),
    taskChangesAfter: (after: number, limit?: number) => taskChangesAfter(db, after, limit),
    lastId: () => lastEventId(db),
  };

  const metrics = {
    tasksByStatus: (projectId?: string) => tasksByStatus(db, projectId),
    runDurations: (projectId?: string) => runDurations(db, projectId),
    usageByProject: () => usageByProject(db),
  };

  return { db, clock, onWrite, projects, tasks, runs, approvals, decisions, events, metrics, close: () => db.close() };
}

export type Store = ReturnType<typeof createStore>;
