/**
 * The Store: the repositories over one DBAdapter, with an injected clock.
 * Each repository method is one store operation (src/store/ops/*); the ones
 * that change several rows run in one transaction, and every status change
 * appends its event in the same transaction, so the log never disagrees with
 * the state.
 */
import type { TaskEdit, TaskInput, ProjectInput } from '../core/schemas.js';
import type { TaskStatus } from '../core/status.js';
import type { Gate, RunKind, RunStatus, Task } from '../core/types.js';
import type { DBAdapter, Queryable } from './db.js';
import { advanceClaimed, claimTask, expireClaims, failClaim, heartbeatClaim, listClaimable, renewOwnedLeases, type Fence } from './ops/claim.js';
import { createTask } from './ops/createTask.js';
import { decomposeTask, type SubtaskSpec } from './ops/decompose.js';
import { editTask } from './ops/editTask.js';
import { appendEvent, appendEventOnce, eventsByIds, listEvents, type NewEvent } from './ops/events.js';
import { listDecisions, recordDecision, type SchedulerDecision } from './ops/decisions.js';
import { approveGate, listApprovals, rejectGate, type LineComment } from './ops/gates.js';
import { findTask, getTask, listTasks, type TaskFilter } from './ops/getTask.js';
import { runDurations, tasksByStatus, usageByProject } from './ops/metrics.js';
import { createProject, getProject, listProjects, updateProjectConfig } from './ops/projects.js';
import { createRun, finishRun, getRun, listRuns, setOutboxProgress, setRunWorker } from './ops/runs.js';
import { transitionTask, type TransitionFields } from './ops/transitionTask.js';

export type Clock = () => number;

function statusEvent(before: Pick<Task, 'status'>, after: Task, extra: Record<string, unknown> = {}): NewEvent {
  return { projectId: after.projectId, taskId: after.id, type: 'task.status', payload: { from: before.status, to: after.status, ...extra } };
}

export function createStore(raw: DBAdapter, clock: Clock = Date.now) {
  // Listeners told after every committed write transaction (the daemon's event
  // feed reads new events at once instead of at its next poll).
  const writeListeners = new Set<() => void>();
  const db: DBAdapter = {
    ...raw,
    transaction: async (fn) => {
      const result = await raw.transaction(fn);
      for (const l of writeListeners) l();
      return result;
    },
  };
  const onWrite = (listener: () => void) => {
    writeListeners.add(listener);
    return () => writeListeners.delete(listener);
  };
  const tx = <T>(fn: (q: Queryable, now: number) => Promise<T>) => db.transaction((q) => fn(q, clock()));

  const projects = {
    create: (input: ProjectInput) => tx((q, now) => createProject(q, input, now)),
    get: (idOrName: string) => getProject(db, idOrName),
    list: () => listProjects(db),
    updateConfig: (idOrName: string, config: Record<string, unknown>) =>
      tx(async (q, now) => {
        const project = await updateProjectConfig(q, idOrName, config, now);
        await appendEvent(q, { projectId: project.id, type: 'project.config', payload: { keys: Object.keys(config) } }, now);
        return project;
      }),
  };

  const tasks = {
    create: (input: TaskInput) =>
      tx(async (q, now) => {
        const task = await createTask(q, input, now);
        await appendEvent(q, { projectId: task.projectId, taskId: task.id, type: 'task.created', payload: { title: task.title } }, now);
        return task;
      }),
    get: (id: string) => getTask(db, id),
    find: (id: string) => findTask(db, id),
    list: (filter?: TaskFilter) => listTasks(db, filter),
    edit: (id: string, edit: TaskEdit) =>
      tx(async (q, now) => {
        const task = await editTask(q, id, edit, now);
        await appendEvent(q, { projectId: task.projectId, taskId: id, type: 'task.edited', payload: { fields: Object.keys(edit) } }, now);
        return task;
      }),
    transition: (id: string, to: TaskStatus, opts: { from?: TaskStatus; fields?: TransitionFields; reason?: string; traceId?: string } = {}) =>
      tx(async (q, now) => {
        const { before, after } = await transitionTask(q, { id, to, from: opts.from, fields: opts.fields, now });
        await appendEvent(q, { ...statusEvent(before, after, opts.reason ? { reason: opts.reason } : {}), traceId: opts.traceId ?? null }, now);
        return after;
      }),
    /** A person retries: back to ready, the backoff baseline reset to the attempts so far. */
    retry: (id: string, from: TaskStatus) =>
      tx(async (q, now) => {
        const { before, after } = await transitionTask(q, { id, to: 'ready', from, fields: { nextEligibleAt: null }, now });
        await q.run(`UPDATE tasks SET retry_baseline = attempt WHERE id = $1`, [id]);
        await appendEvent(q, statusEvent(before, after, { reason: 'retry' }), now);
        return getTask(q, id);
      }),
    claimable: (opts: { projectId?: string; limit?: number } = {}) => listClaimable(db, { ...opts, now: clock() }),
    claim: (id: string, owner: string, leaseMs: number) => claimTask(db, { id, owner, leaseMs, now: clock() }),
    heartbeat: (f: Omit<Fence, 'now'>, leaseMs: number) => heartbeatClaim(db, { ...f, leaseMs, now: clock() }),
    expireClaims: () => expireClaims(db, { now: clock() }),
    renewOwnedLeases: (owner: string, leaseMs: number) => renewOwnedLeases(db, { owner, leaseMs, now: clock() }),
    advance: (f: Omit<Fence, 'now'>, from: TaskStatus, to: TaskStatus, fields?: TransitionFields) =>
      tx(async (q, now) => {
        const won = await advanceClaimed(q, { ...f, now, from, to, fields });
        if (won) await appendEvent(q, statusEvent({ status: from }, await getTask(q, f.id), { owner: f.owner, attempt: f.attempt }), now);
        return won;
      }),
    fail: (f: Omit<Fence, 'now'>, error: string, backoffMs: number) =>
      tx(async (q, now) => {
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
      tx(async (q, now) => {
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
      tx(async (q, now) => {
        const before = await getTask(q, id);
        const { old, next } = await rejectGate(q, { id, gate, who, reason, now, comments });
        await appendEvent(q, statusEvent(before, old, { gate, decision: 'reject', who, reason, nextVersion: next.id, ...(comments.length ? { comments } : {}) }), now);
        await appendEvent(q, { projectId: next.projectId, taskId: next.id, type: 'task.created', payload: { title: next.title, version: next.version, parentVersionId: old.id } }, now);
        return { old, next };
      }),
  };

  const runs = {
    create: (opts: { taskId: string; kind: RunKind; model: string | null; traceId: string; attempt: number; id?: string; runDir?: string | null; owner?: string | null }) =>
      tx((q, now) => createRun(q, { ...opts, now })),
    setWorker: (id: string, pid: number | null) => setRunWorker(db, id, pid),
    setOutboxProgress: (id: string, offset: number, seq: number) => setOutboxProgress(db, id, offset, seq),
    get: (id: string) => getRun(db, id),
    finish: (opts: { id: string; status: Exclude<RunStatus, 'running'>; inputTokens?: number; outputTokens?: number; costUsd?: number; error?: string | null }) =>
      tx((q, now) => finishRun(q, { ...opts, now })),
    list: (filter?: Parameters<typeof listRuns>[1]) => listRuns(db, filter),
  };

  const approvals = {
    list: (filter?: Parameters<typeof listApprovals>[1]) => listApprovals(db, filter),
  };

  const decisions = {
    record: (d: Omit<SchedulerDecision, 'id' | 'at'>) => tx((q, now) => recordDecision(q, { ...d, at: now })),
    list: (filter?: Parameters<typeof listDecisions>[1]) => listDecisions(db, filter),
  };

  const events = {
    append: (e: NewEvent) => tx((q, now) => appendEvent(q, e, now)),
    appendOnce: (e: NewEvent, dedupeKey: string) => tx((q, now) => appendEventOnce(q, e, dedupeKey, now)),
    list: (filter?: Parameters<typeof listEvents>[1]) => listEvents(db, filter),
    byIds: (ids: readonly number[]) => eventsByIds(db, ids),
  };

  const metrics = {
    tasksByStatus: (projectId?: string) => tasksByStatus(db, projectId),
    runDurations: (projectId?: string) => runDurations(db, projectId),
    usageByProject: () => usageByProject(db),
  };

  return { db, clock, onWrite, projects, tasks, runs, approvals, decisions, events, metrics, close: () => db.close() };
}

export type Store = ReturnType<typeof createStore>;
