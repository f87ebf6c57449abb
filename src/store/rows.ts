/**
 * Row ↔ domain mapping. JSON columns are parsed and checked on read: a
 * malformed value is a CORRUPT_COLUMN error naming the table, column and row,
 * never a crash deep inside a caller or a silently wrong default.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { MaestroError } from '../core/errors.js';
import { feedbackSourceSchema } from '../core/feedbackSource.js';
import { isTaskStatus } from '../core/status.js';
import type { Approval, MaestroEvent, Project, Run, Task } from '../core/types.js';

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

const stringArray = z.array(z.string());
const object = z.record(z.string(), z.unknown());

export function parseJsonColumn<T>(table: string, column: string, rowId: string | number, text: unknown, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = typeof text === 'string' ? JSON.parse(text) : text;
  } catch (err) {
    throw new MaestroError('CORRUPT_COLUMN', `${table}.${column} of ${rowId} is not valid JSON (${(err as Error).message}).`, { details: { table, column, rowId } });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new MaestroError('CORRUPT_COLUMN', `${table}.${column} of ${rowId} has the wrong shape: ${parsed.error.issues[0]?.message ?? 'invalid'}.`, { details: { table, column, rowId } });
  }
  return parsed.data;
}

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export type Row = Record<string, unknown>;

export function toProject(r: Row): Project {
  const id = String(r.id);
  return {
    id,
    name: String(r.name),
    repoPath: String(r.repo_path),
    config: parseJsonColumn('projects', 'config', id, r.config, object),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    archivedAt: r.archived_at === null || r.archived_at === undefined ? null : num(r.archived_at),
  };
}

export function toTask(r: Row, approvals: Approval[] = []): Task {
  const id = String(r.id);
  const status = r.status;
  if (!isTaskStatus(status)) throw new MaestroError('CORRUPT_COLUMN', `tasks.status of ${id} is "${String(status)}", not a known status.`, { details: { table: 'tasks', column: 'status', rowId: id } });
  return {
    id,
    projectId: String(r.project_id),
    parentId: strOrNull(r.parent_id),
    depth: num(r.depth),
    title: String(r.title),
    complexity: r.complexity as Task['complexity'],
    status,
    priority: num(r.priority) as Task['priority'],
    deps: parseJsonColumn('tasks', 'deps', id, r.deps, stringArray),
    plan: strOrNull(r.plan),
    spec: strOrNull(r.spec),
    approvals,
    result: r.result === null || r.result === undefined ? null : parseJsonColumn('tasks', 'result', id, r.result, object),
    retryBaseline: num(r.retry_baseline),
    nextEligibleAt: numOrNull(r.next_eligible_at),
    lastRunError: strOrNull(r.last_run_error),
    taskType: strOrNull(r.task_type) as Task['taskType'],
    scope: strOrNull(r.scope) as Task['scope'],
    ownedFiles: parseJsonColumn('tasks', 'owned_files', id, r.owned_files, stringArray),
    expectedOutput: strOrNull(r.expected_output),
    feedback: strOrNull(r.feedback),
    feedbackSource: r.feedback_source === null || r.feedback_source === undefined ? null : parseJsonColumn('tasks', 'feedback_source', id, r.feedback_source, feedbackSourceSchema),
    parentVersionId: strOrNull(r.parent_version_id),
    version: num(r.version),
    claimedAt: numOrNull(r.claimed_at),
    claimedBy: strOrNull(r.claimed_by),
    attempt: num(r.attempt),
    leaseExpiresAt: numOrNull(r.lease_expires_at),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toRun(r: Row): Run {
  return {
    id: String(r.id),
    taskId: String(r.task_id),
    kind: r.kind as Run['kind'],
    status: r.status as Run['status'],
    model: strOrNull(r.model),
    traceId: String(r.trace_id),
    attempt: num(r.attempt),
    startedAt: num(r.started_at),
    endedAt: numOrNull(r.ended_at),
    inputTokens: num(r.input_tokens),
    outputTokens: num(r.output_tokens),
    costUsd: num(r.cost_usd),
    error: strOrNull(r.error),
    runDir: strOrNull(r.run_dir),
    owner: strOrNull(r.owner),
    workerPid: numOrNull(r.worker_pid),
    outboxOffset: num(r.outbox_offset ?? 0),
    outboxSeq: num(r.outbox_seq ?? -1),
  };
}

export function toApproval(r: Row): Approval {
  return {
    id: String(r.id),
    taskId: String(r.task_id),
    gate: r.gate as Approval['gate'],
    decision: r.decision as Approval['decision'],
    reason: strOrNull(r.reason),
    who: String(r.who),
    at: num(r.at),
    conflictResolution: r.gate === 'exec_review' && r.written_by === 'conflict',
  };
}

/**
 * The approvals columns, and `written_by`: the kind of the last run that wrote the task's branch (execute or
 * conflict) before the approval, which says what an exec_review approval approved (toApproval conflictResolution).
 */
export const APPROVAL_COLUMNS = `approvals.*, (SELECT r.kind FROM runs r WHERE r.task_id = approvals.task_id AND r.kind IN ('execute', 'conflict') AND r.started_at <= approvals.at ORDER BY r.started_at DESC, r.id DESC LIMIT 1) AS written_by`;

export function toEvent(r: Row): MaestroEvent {
  const id = num(r.id);
  return {
    id,
    projectId: strOrNull(r.project_id),
    taskId: strOrNull(r.task_id),
    runId: strOrNull(r.run_id),
    traceId: strOrNull(r.trace_id),
    type: String(r.type),
    payload: parseJsonColumn('events', 'payload', id, r.payload, object),
    at: num(r.at),
  };
}

/** The task columns in insert order, and a task's values for them. */
export const TASK_COLUMNS = [
  'id', 'project_id', 'parent_id', 'depth', 'title', 'complexity', 'status', 'priority', 'deps', 'plan', 'spec', 'result',
  'retry_baseline', 'next_eligible_at', 'last_run_error', 'task_type', 'scope', 'owned_files', 'expected_output', 'feedback',
  'feedback_source', 'parent_version_id', 'version', 'claimed_at', 'claimed_by', 'attempt', 'lease_expires_at', 'created_at', 'updated_at',
] as const;

export function taskValues(t: Task): (string | number | null)[] {
  return [
    t.id, t.projectId, t.parentId, t.depth, t.title, t.complexity, t.status, t.priority, JSON.stringify(t.deps), t.plan, t.spec,
    t.result === null ? null : JSON.stringify(t.result), t.retryBaseline, t.nextEligibleAt, t.lastRunError, t.taskType, t.scope,
    JSON.stringify(t.ownedFiles), t.expectedOutput, t.feedback, t.feedbackSource === null ? null : JSON.stringify(t.feedbackSource), t.parentVersionId, t.version, t.claimedAt, t.claimedBy, t.attempt,
    t.leaseExpiresAt, t.createdAt, t.updatedAt,
  ];
}

export const INSERT_TASK_SQL = `INSERT INTO tasks (${TASK_COLUMNS.join(', ')}) VALUES (${TASK_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
