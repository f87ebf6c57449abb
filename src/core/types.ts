/** The domain model of the orchestrator (ARCHITECTURE §3). Pure data, no I/O. */
import type { TaskStatus } from './status.js';

export type { TaskStatus } from './status.js';

export const COMPLEXITIES = ['easy', 'medium', 'hard'] as const;
export type Complexity = (typeof COMPLEXITIES)[number];

/** P0 is the most urgent. Stored as 0, 1, 2. */
export const PRIORITIES = [0, 1, 2] as const;
export type Priority = (typeof PRIORITIES)[number];

export const TASK_TYPES = ['feature', 'bugfix', 'refactor', 'chore', 'docs'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_SCOPES = ['file', 'module', 'service', 'cross-service'] as const;
export type TaskScope = (typeof TASK_SCOPES)[number];

export const RUN_KINDS = ['plan', 'execute', 'review', 'conflict', 'merge_check'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const GATES = ['plan_review', 'spec_review', 'exec_review'] as const;
export type Gate = (typeof GATES)[number];

export const DECISIONS = ['approve', 'reject'] as const;
export type Decision = (typeof DECISIONS)[number];

/** Milliseconds since the epoch. Every timestamp in the store is one of these. */
export type EpochMs = number;

export interface Project {
  id: string;
  name: string;
  repoPath: string;
  config: Record<string, unknown>;
  createdAt: EpochMs;
  updatedAt: EpochMs;
  /** When it was archived: no new work, shown apart; null while active. */
  archivedAt: EpochMs | null;
}

/**
 * Where a version's feedback came from, as data: a person's rejection at a gate, or a person's retry from the current
 * main after the last version stopped (core/feedbackSource.ts checks it; the comments are reports.ts's LineComment).
 */
export type FeedbackSource =
  | { kind: 'rejection'; gate: Gate; who: string; reason: string; comments: { file: string; line: number; side: 'new' | 'old'; text: string }[] }
  | { kind: 'fresh'; version: number; who: string; error: string | null };

export interface Task {
  id: string;
  projectId: string;
  parentId: string | null;
  depth: number;
  title: string;
  complexity: Complexity;
  status: TaskStatus;
  priority: Priority;
  deps: string[];
  plan: string | null;
  spec: string | null;
  /** Filled from the approvals table on read; the task row does not own them. */
  approvals: Approval[];
  result: Record<string, unknown> | null;
  /** How many failed attempts the retry backoff counts from (reset by a manual retry). */
  retryBaseline: number;
  nextEligibleAt: EpochMs | null;
  lastRunError: string | null;
  taskType: TaskType | null;
  scope: TaskScope | null;
  ownedFiles: string[];
  expectedOutput: string | null;
  /** The reviewer's or approver's feedback a new version carries forward, in English (the agent's prompt reads it). */
  feedback: string | null;
  /** The same feedback as data (who, which gate, the reason), for a reader to say in its own language; null when there is none, or it predates the field. */
  feedbackSource: FeedbackSource | null;
  parentVersionId: string | null;
  version: number;
  claimedAt: EpochMs | null;
  claimedBy: string | null;
  /** Grows by one with every claim; a claimer holds (claimedBy, attempt) as its fence. */
  attempt: number;
  leaseExpiresAt: EpochMs | null;
  createdAt: EpochMs;
  updatedAt: EpochMs;
}

export interface Run {
  id: string;
  taskId: string;
  kind: RunKind;
  status: RunStatus;
  model: string | null;
  traceId: string;
  attempt: number;
  startedAt: EpochMs;
  endedAt: EpochMs | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  error: string | null;
  /** Where the run's files live (job.json, outbox.ndjson, …). */
  runDir: string | null;
  /** The daemon that runs it, and its worker process. */
  owner: string | null;
  workerPid: number | null;
  /** How far the ingestor has read the outbox: byte offset and last sequence number. */
  outboxOffset: number;
  outboxSeq: number;
}

export interface Approval {
  id: string;
  taskId: string;
  gate: Gate;
  decision: Decision;
  reason: string | null;
  who: string;
  at: EpochMs;
  /**
   * An exec_review approval of a conflict resolution (the last run that wrote the branch before it was a conflict
   * run), not of the task's change itself: read from the task's runs, not stored.
   */
  conflictResolution: boolean;
}

export interface MaestroEvent {
  /** Monotonic per store; the paging cursor. */
  id: number;
  projectId: string | null;
  taskId: string | null;
  runId: string | null;
  traceId: string | null;
  type: string;
  payload: Record<string, unknown>;
  at: EpochMs;
}
