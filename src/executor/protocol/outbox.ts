/**
 * outbox.ndjson: the only way a worker talks back. One JSON record a line, each
 * with the run's traceId, runId and a sequence number that grows by one across
 * worker restarts (a restarted worker continues after the last whole record).
 * The daemon's ingestor tails it with `readOutbox(runDir, offset)` and keeps the
 * returned offset; a torn last line is left for the next read.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { RUN_KINDS, type RunKind } from '../../core/types.js';
import { appendJsonLine, readJsonLines, repairTornTail } from './files.js';

export const OUTBOX_FILE = 'outbox.ndjson';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Every model that answered, in call order (the fallback chain shows here). */
  models: string[];
  /** Agent calls made by this run (skipped stages do not count). */
  agentCalls: number;
}

export interface NeedsAttention {
  /** Machine-readable: divergence | diff_gate | plan_invalid | verdict_invalid | review_rounds | agent_failed | agent_timeout | unknown_provider | git | not_a_repository | dirty_main | job_invalid | ... */
  reason: string;
  details: Record<string, unknown>;
}

interface Base {
  seq: number;
  traceId: string;
  runId: string;
  /** ms since the epoch */
  at: number;
}

export type StageState = 'start' | 'done' | 'skipped' | 'failed';

export interface PhaseRecord extends Base {
  type: 'phase';
  stage: string;
  state: StageState;
  /** For concurrent stages (the two reviews): monotonic ms, comparable within one run. */
  mono?: number;
  detail?: Record<string, unknown>;
}

export interface TokenRecord extends Base {
  type: 'token';
  stage: string;
  text: string;
}

export interface ClarifyRecord extends Base {
  type: 'clarify';
  stage: string;
  clarifyId: string;
  question: string;
}

export interface HeartbeatRecord extends Base {
  type: 'heartbeat';
  pid: number;
}

export interface ResultRecord extends Base {
  type: 'result';
  kind: RunKind;
  usage: Usage;
  /** The shape depends on kind: PlanResult | ExecuteResult | ReviewResult | ConflictResult. */
  data: Record<string, unknown>;
  /** Set when the run completed but the task needs a human (review rounds used up). */
  needsAttention?: NeedsAttention;
}

export interface ErrorRecord extends Base {
  type: 'error';
  code: string;
  message: string;
  stage: string | null;
  /** True when trying again may help (a failed check, an interrupted worker). */
  retryable: boolean;
  usage: Usage;
  needsAttention?: NeedsAttention;
  details?: Record<string, unknown>;
}

export type OutboxRecord = PhaseRecord | TokenRecord | ClarifyRecord | HeartbeatRecord | ResultRecord | ErrorRecord;

/** A record as emitted, before the writer stamps it. */
export type OutboxDraft = DistributiveOmit<OutboxRecord, keyof Base>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * What the ingestor relies on in each record: the envelope and, per type, the fields it reads. Fields it only
 * passes on (a result's data, details) stay as they are. The worker writes these, but the run directory is
 * reachable by the agent's processes too, so a line is checked before it moves a task.
 */
const envelope = { seq: z.number().int().positive(), traceId: z.string(), runId: z.string(), at: z.number() };
const usageSchema = z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number(), models: z.array(z.string()), agentCalls: z.number() });
const needsAttentionSchema = z.looseObject({ reason: z.string(), details: z.record(z.string(), z.unknown()) });
const outboxRecordSchema = z.discriminatedUnion('type', [
  z.looseObject({ ...envelope, type: z.literal('phase'), stage: z.string(), state: z.enum(['start', 'done', 'skipped', 'failed']), detail: z.record(z.string(), z.unknown()).optional() }),
  z.looseObject({ ...envelope, type: z.literal('token'), stage: z.string(), text: z.string() }),
  z.looseObject({ ...envelope, type: z.literal('clarify'), stage: z.string(), clarifyId: z.string(), question: z.string() }),
  z.looseObject({ ...envelope, type: z.literal('heartbeat'), pid: z.number() }),
  z.looseObject({ ...envelope, type: z.literal('result'), kind: z.enum(RUN_KINDS), usage: usageSchema, data: z.record(z.string(), z.unknown()), needsAttention: needsAttentionSchema.optional() }),
  z.looseObject({ ...envelope, type: z.literal('error'), code: z.string(), message: z.string(), stage: z.string().nullable(), retryable: z.boolean(), usage: usageSchema, needsAttention: needsAttentionSchema.optional(), details: z.record(z.string(), z.unknown()).optional() }),
]);

/**
 * Whole records from `offset` on. `corrupt` lists complete lines that were not JSON or not a record (never
 * expected; log them): they are passed over, never applied.
 */
export function readOutbox(runDir: string, offset = 0): { records: OutboxRecord[]; nextOffset: number; corrupt: Array<{ line: number; text: string; problem?: string }> } {
  const read = readJsonLines<unknown>(join(runDir, OUTBOX_FILE), offset);
  const records: OutboxRecord[] = [];
  const corrupt: Array<{ line: number; text: string; problem?: string }> = [...read.corrupt];
  for (const [i, value] of read.records.entries()) {
    const parsed = outboxRecordSchema.safeParse(value);
    if (parsed.success) records.push(value as OutboxRecord);
    else corrupt.push({ line: read.lines[i]!, text: JSON.stringify(value).slice(0, 200), problem: z.prettifyError(parsed.error) });
  }
  return { records, nextOffset: read.nextOffset, corrupt };
}

export class OutboxWriter {
  readonly path: string;
  private seq: number;
  private readonly now: () => number;

  constructor(runDir: string, private readonly ids: { traceId: string; runId: string }, now: () => number = Date.now) {
    this.path = join(runDir, OUTBOX_FILE);
    this.now = now;
    // A killed predecessor may have left half a line; drop it, then continue its numbering.
    repairTornTail(this.path);
    const existing = readJsonLines<OutboxRecord>(this.path).records;
    this.seq = existing.reduce((max, r) => Math.max(max, typeof r.seq === 'number' ? r.seq : 0), 0);
  }

  write(draft: OutboxDraft): OutboxRecord {
    const record = { ...draft, seq: ++this.seq, traceId: this.ids.traceId, runId: this.ids.runId, at: this.now() } as OutboxRecord;
    appendJsonLine(this.path, record);
    return record;
  }
}
