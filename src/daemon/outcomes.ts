/**
 * What a run's final record does to its task, applied in ONE transaction with
 * finishing the run, its event and the ingestion offset: a crash leaves either
 * all of it or none, and re-ingesting the record after a restart finds the run
 * finished and changes nothing.
 *
 *   plan     → plan_review, the plan and its subtasks stored for the gate
 *   execute  → reviewing (the same claim goes on to the review run)
 *   review   → exec_review | executing again with the findings | needs_attention
 *   conflict → exec_review (at merge time: a person approves the resolution) | stays executing | needs_attention
 *   merge_check → stays merging, the checked merge the commit that lands | needs_attention (a check failed) | stays
 *                 merging, it and the changes checked with it checked alone next (a check of several failed)
 *   error    → needs_attention when a person must act; else back to ready with a backoff
 */
import { MaestroError } from '../core/errors.js';
import { MERGE_CONFLICT_PREFIX } from '../core/mergeConflictWays.js';
import { approvedCommit, mergeChecked, nextCheck, type CheckedBatch } from '../core/reviewed.js';
import type { TaskStatus } from '../core/status.js';
import type { Priority, Run, Task } from '../core/types.js';
import type { ErrorRecord, ResultRecord } from '../executor/protocol/outbox.js';
import type { Queryable } from '../store/db.js';
import { advanceClaimed, failClaim } from '../store/ops/claim.js';
import { appendEventOnce } from '../store/ops/events.js';
import { taskRow } from '../store/ops/getTask.js';
import { markMergeAlone } from '../store/ops/mergeAlone.js';
import { finishRun, setOutboxProgress } from '../store/ops/runs.js';
import { transitionTask, type TransitionFields } from '../store/ops/transitionTask.js';

const SECOND = 1000;
/** Backoff after a failed run: 5 s, 10 s, 20 s, … capped at 10 minutes. */
export function backoffMs(failuresSinceBaseline: number): number {
  return Math.min(10 * 60 * SECOND, 5 * SECOND * 2 ** Math.max(0, failuresSinceBaseline - 1));
}
/** Consecutive failed runs of one task version before it needs a person. */
export const MAX_FAILED_RUNS = 3;

function priorityOf(p: unknown): Priority {
  if (p === 0 || p === 'P0') return 0;
  if (p === 2 || p === 'P2') return 2;
  return 1;
}

interface Move {
  to: TaskStatus | null;
  fields?: TransitionFields;
  reason?: string;
}

/**
 * A needs-attention record's details as a person reads them on the board and in `task show`: `key value`
 * pairs, a finding as `file:line message`; JSON only for what has no better form. (Raw JSON of every
 * finding, escapes and all, was what a person saw.)
 */
export function readableDetails(details: Record<string, unknown>): string {
  const finding = (x: unknown): string | null => {
    const f = x as { file?: unknown; line?: unknown; message?: unknown } | null;
    if (!f || typeof f !== 'object' || typeof f.message !== 'string') return null;
    return `${typeof f.file === 'string' ? `${f.file}${typeof f.line === 'number' ? `:${f.line}` : ''} ` : ''}${f.message}`;
  };
  const part = (v: unknown): string => {
    if (v === null || typeof v !== 'object') return String(v);
    if (Array.isArray(v)) return v.map((x) => finding(x) ?? part(x)).join('; ');
    return JSON.stringify(v);
  };
  return Object.entries(details).map(([k, v]) => `${k} ${part(v)}`).join(', ').slice(0, 2000);
}

export function moveForResult(run: Run, task: Task, record: ResultRecord): Move {
  // A merge check that lands nothing put the branch back where it started: a chain checked before no longer counts.
  const undone = run.kind === 'merge_check' ? chainUndone(task) : null;
  if (record.needsAttention) return { to: 'needs_attention', fields: { lastRunError: `${record.needsAttention.reason}: ${readableDetails(record.needsAttention.details)}`, ...(undone ? { result: undone } : {}) }, reason: record.needsAttention.reason };
  const data = record.data;
  switch (run.kind) {
    case 'plan': {
      const subtasks = ((data.subtasks as Record<string, unknown>[] | undefined) ?? []).map((s) => ({
        title: String(s.title),
        complexity: s.complexity,
        priority: priorityOf(s.priority),
        deps: (s.deps as number[] | undefined) ?? [],
        ownedFiles: (s.ownedFiles as string[] | undefined) ?? [],
        expectedOutput: typeof s.expectedOutput === 'string' && s.expectedOutput ? s.expectedOutput : null,
      }));
      return { to: 'plan_review', fields: { plan: String(data.markdown ?? data.plan ?? ''), result: { kind: 'plan', plan: data.plan ?? null, subtasks } } };
    }
    case 'execute':
      return { to: 'reviewing', fields: { result: { kind: 'execute', ...data } } };
    case 'review': {
      const next = data.next;
      if (next === 'exec_review') return { to: 'exec_review', fields: { result: { kind: 'review', ...data } } };
      if (next === 'execute') return { to: 'executing', fields: { result: { ...(task.result ?? {}), kind: 'review', verdict: data.verdict, findings: data.findings, feedback: data.feedback } }, reason: 'review rejected' };
      return { to: 'needs_attention', fields: { lastRunError: 'review rounds used up' }, reason: 'review rounds used up' };
    }
    case 'conflict': {
      const conflict = { resolvedBy: data.resolvedBy, files: data.conflictedFiles, commitSha: data.commitSha };
      if (data.next === 'exec_review') {
        const { needsConflictRun: _done, ...rest } = task.result ?? {};
        // At merge time the resolution is a change the person who approved has not seen: it waits at their gate
        // again (approved, it merges; a project that approves by itself approves it again). Before, the task stayed
        // merging and the resolution went into main on the old approval. While executing, main has now been
        // brought into the branch: execution goes on (the same claim's next run is an execute run, with any
        // feedback still due), and its review and gate come after.
        if (task.status === 'merging') return { to: 'exec_review', fields: { result: { ...rest, conflict } }, reason: 'a conflict run resolved the merge: the resolution waits for approval' };
        return { to: null, fields: { result: { ...rest, conflict, branch: data.branch } } };
      }
      return { to: 'needs_attention', fields: { lastRunError: `${MERGE_CONFLICT_PREFIX} the conflict resolution was not approved: ${String(data.feedback ?? '')}`.slice(0, 2000) } };
    }
    case 'merge_check': {
      // Failed on several changes together: nobody is asked yet; each of them is checked alone next (mergeBatch.ts).
      if (data.batchFailed) return { to: null, fields: { result: { ...(undone ?? task.result ?? {}), mergeAlone: approvedCommit(task) } }, reason: 'checked together, failed: each change is checked alone' };
      // The base now conflicts: nothing was checked, and the train finds the conflict (a conflict run) itself.
      if (data.conflict === true || typeof data.commitSha !== 'string') return undone ? { to: null, fields: { result: undone } } : { to: null };
      // The task stays merging on its approval, the checked commit now the one that may land (core/reviewed.ts).
      const base = typeof data.baseSha === 'string' ? data.baseSha : null;
      const { round: rounds, rechecks } = nextCheck(task, base);
      const approved = approvedCommit(task);
      const batch = checkedBatch(task, data);
      return { to: null, fields: { result: { ...(task.result ?? {}), mergeChecked: { approved, commitSha: data.commitSha, rounds, rechecks, baseSha: data.baseSha, checks: data.checks, ...(batch ? { batch } : {}) } } } };
    }
    default: {
      const never: never = run.kind;
      throw new Error(`unknown run kind ${String(never)}`);
    }
  }
}

/** The task's result with the chain its last check passed on undone (its merge check before it back), or null: none. */
function chainUndone(task: Task): Record<string, unknown> | null {
  const batch = mergeChecked(task)?.batch;
  if (!batch) return null;
  const { mergeChecked: _chain, ...rest } = task.result ?? {};
  return batch.before ? { ...rest, mergeChecked: batch.before } : rest;
}

/** The chain a check of several changes passed on (the task's merge commit first), as result.mergeChecked.batch keeps it. */
function checkedBatch(task: Task, data: Record<string, unknown>): CheckedBatch | null {
  const b = data.batch as { cars?: CheckedBatch['cars'] } | undefined;
  if (!b || !Array.isArray(b.cars) || b.cars.length < 2 || typeof data.from !== 'string' || typeof data.baseSha !== 'string') return null;
  // What the branch held at `from`: the check before this chain's (kept through a chain checked again from there).
  const before = mergeChecked(task)?.batch?.before ?? task.result?.mergeChecked ?? null;
  return { from: data.from, before, base: data.baseSha, cars: b.cars };
}

export interface ApplyContext {
  owner: string;
  now: number;
  offset: number;
}

/**
 * Whether a still-running run's result is taken rather than fenced out: its task is still the claim of `owner`
 * (the run's daemon), or it is a conflict run or a merge check at merge time (which run under no claim).
 */
export function takesResult(task: Task, run: Run, owner: string): boolean {
  return task.claimedBy === owner || ((run.kind === 'conflict' || run.kind === 'merge_check') && task.status === 'merging');
}

/** Applies a final record; returns the task's new status (or null when it stayed). */
export async function applyFinalRecord(q: Queryable, run: Run, record: ResultRecord | ErrorRecord, ctx: ApplyContext): Promise<TaskStatus | null> {
  const current = await q.one<{ status: string }>(`SELECT status FROM runs WHERE id = $1`, [run.id]);
  if (current?.status !== 'running') {
    await setOutboxProgress(q, run.id, ctx.offset, record.seq);
    return null; // applied before a crash; nothing more to do
  }
  const failed = record.type === 'error';
  const owning = await taskRow(q, run.taskId);
  if (!takesResult(owning, run, ctx.owner)) {
    // The claim moved on (it expired, the task was cancelled, another claimer
    // took it): this run's result is fenced out. It ends, and changes nothing else.
    await finishRun(q, { id: run.id, status: 'cancelled', now: ctx.now, error: `lost the claim on ${owning.id} (now ${owning.claimedBy ?? 'unclaimed'}); result discarded` });
    await setOutboxProgress(q, run.id, ctx.offset, record.seq);
    return null;
  }
  await finishRun(q, {
    id: run.id,
    status: failed ? 'failed' : 'succeeded',
    now: ctx.now,
    inputTokens: record.usage.inputTokens,
    outputTokens: record.usage.outputTokens,
    costUsd: record.usage.costUsd,
    error: failed ? `${record.code}: ${record.message}` : null,
    // The board's model column: every model the calls used, in order (a fallback shows as "a, b").
    model: [...new Set(record.usage.models ?? [])].join(', ') || null,
  });
  const task = await taskRow(q, run.taskId);
  const fence = { id: task.id, owner: ctx.owner, attempt: task.attempt, now: ctx.now };
  const claimed = task.claimedBy === ctx.owner;
  let to: TaskStatus | null = null;
  let reason: string | undefined;

  if (record.type === 'error' && record.code === 'MERGE_CONFLICT' && record.details?.next === 'conflict' && claimed) {
    // Main could not be merged into the branch: the next run of this claim is a conflict run.
    await q.run(`UPDATE tasks SET result = $1, updated_at = $2 WHERE id = $3`, [JSON.stringify({ ...(task.result ?? {}), needsConflictRun: true, conflictedFiles: record.details.conflictedFiles ?? [] }), ctx.now, task.id]);
    reason = 'main conflicts with the branch: a conflict run resolves it';
  } else if (record.type === 'error') {
    const failures = await q.one<{ n: number }>(`SELECT COUNT(*) AS n FROM runs WHERE task_id = $1 AND status = 'failed' AND attempt > $2`, [task.id, task.retryBaseline]);
    const n = Number(failures?.n ?? 1);
    const error = `${record.code}: ${record.message}`.slice(0, 4000);
    if (record.needsAttention || n >= MAX_FAILED_RUNS || !claimed) {
      to = 'needs_attention';
      reason = record.needsAttention?.reason ?? (n >= MAX_FAILED_RUNS ? `${n} failed runs` : record.code.toLowerCase());
      await moveTask(q, task, fence, claimed, to, { lastRunError: error });
    } else {
      const won = await failClaim(q, { ...fence, error, backoffMs: backoffMs(n) });
      if (!won) throw new MaestroError('STALE_CLAIM', `Lost the claim on ${task.id} while failing it.`);
      to = 'ready';
      reason = `retry after ${backoffMs(n) / SECOND} s`;
    }
  } else {
    const move = moveForResult(run, task, record);
    reason = move.reason;
    to = move.to;
    if (to) await moveTask(q, task, fence, claimed, to, move.fields ?? {});
    else if (move.fields) await transitionFieldsOnly(q, task, move.fields, ctx.now);
    const failedTogether = run.kind === 'merge_check' ? (record.data.batchFailed as { check?: unknown; taskIds?: unknown } | undefined) : undefined;
    if (failedTogether && Array.isArray(failedTogether.taskIds)) {
      const riders = failedTogether.taskIds.filter((id): id is string => typeof id === 'string' && id !== task.id);
      await markMergeAlone(q, { taskIds: riders, leader: { id: task.id, title: task.title }, check: String(failedTogether.check), now: ctx.now });
    }
  }
  await appendEventOnce(
    q,
    { projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'run.finished', payload: { kind: run.kind, status: failed ? 'failed' : 'succeeded', usage: record.usage, error: failed ? record.message : null } },
    `${run.id}:${record.seq}`,
    ctx.now,
  );
  if (to) {
    await appendEventOnce(q, { projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'task.status', payload: { from: task.status, to, ...(reason ? { reason } : {}) } }, `${run.id}:${record.seq}:status`, ctx.now);
  }
  await setOutboxProgress(q, run.id, ctx.offset, record.seq);
  return to;
}

async function moveTask(q: Queryable, task: Task, fence: { id: string; owner: string; attempt: number; now: number }, claimed: boolean, to: TaskStatus, fields: TransitionFields): Promise<void> {
  if (claimed) {
    const won = await advanceClaimed(q, { ...fence, from: task.status, to, fields });
    if (!won) throw new MaestroError('STALE_CLAIM', `Lost the claim on ${task.id} (${task.status} → ${to}).`);
  } else {
    await transitionTask(q, { id: task.id, from: task.status, to, fields, now: fence.now });
  }
}

async function transitionFieldsOnly(q: Queryable, task: Task, fields: TransitionFields, now: number): Promise<void> {
  if (fields.result !== undefined) await q.run(`UPDATE tasks SET result = $1, updated_at = $2 WHERE id = $3`, [JSON.stringify(fields.result), now, task.id]);
}
