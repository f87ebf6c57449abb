/**
 * outbox.ndjson: the only way a worker talks back. One JSON record a line, each
 * with the run's traceId, runId and a sequence number that grows by one across
 * worker restarts (a restarted worker continues after the last whole record of
 * the series, see OutboxSequence). The daemon's ingestor tails it with
 * `readOutbox(runDir, offset)` and keeps the returned offset; a torn last line
 * is left for the next read.
 */
import { statSync } from 'node:fs';
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
 * The most one readOutbox reads (and the line it ends in). The daemon's ingestor reads on its event loop, and an
 * agent that prints fast (a command provider's output, token record after token record) grows the outbox faster
 * than it is read: 180 MB read and parsed in one go took 1 s, and the memory of the text twice over. With `more`
 * the ingestor reads on from nextOffset, its store writes between reads.
 */
export const OUTBOX_READ_BYTES = 8 * 1024 * 1024;

/**
 * Whole records from `offset` on (OUTBOX_READ_BYTES of them at most; `more` when there are more), with the byte offset each one's line starts at. `corrupt` lists complete lines
 * that were not JSON or not a record (never expected; log them): they are passed over, never applied.
 */
export function readOutbox(runDir: string, offset = 0, maxBytes = OUTBOX_READ_BYTES): { records: OutboxRecord[]; offsets: number[]; nextOffset: number; more: boolean; corrupt: Array<{ line: number; text: string; problem?: string }> } {
  const read = readJsonLines<unknown>(join(runDir, OUTBOX_FILE), offset, { maxBytes });
  const records: OutboxRecord[] = [];
  const offsets: number[] = [];
  const corrupt: Array<{ line: number; text: string; problem?: string }> = [...read.corrupt];
  for (const [i, value] of read.records.entries()) {
    const parsed = outboxRecordSchema.safeParse(value);
    if (parsed.success) {
      records.push(value as OutboxRecord);
      offsets.push(read.offsets[i]!);
    } else corrupt.push({ line: read.lines[i]!, text: JSON.stringify(value).slice(0, 200), problem: z.prettifyError(parsed.error) });
  }
  return { records, offsets, nextOffset: read.nextOffset, more: read.more === true, corrupt };
}

/**
 * The most a stream's replay reads of a task's outboxes (every board opening a task's live stream, every reconnect),
 * on the daemon's event loop. It read them whole: an agent printing fast makes an outbox hundreds of MB, and 180 MB
 * of small token records (900,000 of 200 bytes) took 12–14 s and 0.7–1 GB a replay (measured); reading and
 * checking records costs about 70 ms a MB of them, so 1 MiB is about 70 ms. 1 MiB of token records still holds
 * more text than a board shows (LiveOutput keeps 200,000 characters); the run's transcript has it all.
 */
export const OUTBOX_TAIL_BYTES = 1024 * 1024;

/**
 * The whole records of the outbox's last `maxBytes` (those whose line starts in them); `from`, the byte offset of
 * the first (the outbox's size when none): what was left out before it; and the outbox's `size` when looked at.
 * Read from the byte before the window, so a line cut by the window's start is known as such (it starts there)
 * and dropped, never taken for a record. A window of no bytes reads nothing (the size is from stat).
 */
export function readOutboxTail(runDir: string, maxBytes = OUTBOX_TAIL_BYTES): { records: OutboxRecord[]; from: number; size: number } {
  const size = statSync(join(runDir, OUTBOX_FILE), { throwIfNoEntry: false })?.size ?? 0;
  const start = Math.max(0, size - maxBytes);
  // An empty window (a replay whose later runs took all its bytes) is not opened: it read the byte before it.
  if (start >= size) return { records: [], from: size, size };
  const at = Math.max(0, start - 1);
  const read = readOutbox(runDir, at, size - at);
  const records: OutboxRecord[] = [];
  let from = size;
  for (const [i, r] of read.records.entries()) {
    const offset = read.offsets[i]!;
    if (start > 0 && offset === at) continue; // the end of a line that began before the window
    if (!records.length) from = offset;
    records.push(r);
  }
  return { records, from, size };
}

/** Every whole record of the outbox, read window after window (a worker starting on it, to go on with its numbering). */
export function readWholeOutbox(runDir: string): OutboxRecord[] {
  const records: OutboxRecord[] = [];
  for (let offset = 0; ; ) {
    const read = readOutbox(runDir, offset);
    records.push(...read.records);
    if (!read.more) return records;
    offset = read.nextOffset;
  }
}

/** How a record's seq relates to the records before it (OutboxSequence). */
export type SeqVerdict = 'next' | 'repeat' | 'out_of_sequence';

/**
 * The worker's numbering as the ingestor and a restarted worker both follow it, record by record in file order.
 *
 *   next:            seq = last + 1, or one more than an out-of-sequence record just before → last = seq
 *   repeat:          seq ≤ last: a number already taken (a line written twice) → nothing moves
 *   out_of_sequence: seq > last + 1: a stray line (a corrupted write, a bug) or the worker numbering on past a lost
 *                    line → remembered as `jumped`; last stays
 *
 * `last` moves past a gap only once the record after the out-of-sequence one continues from it. So one stray line
 * with a huge seq is passed by (the next record, last + 1, is still next), where taking the largest seq seen had
 * every later record of the worker look like a repeat; and a worker that really did number on is followed from its
 * second record on. (Two stray lines with consecutive seqs would still pass for the series: the limit of the rule.)
 */
export class OutboxSequence {
  private jumped: number | null = null;

  /** `last`: the seq of the last record of the series taken (0, or less, before the first). */
  constructor(private lastSeq = 0) {}

  get last(): number {
    return Math.max(this.lastSeq, 0);
  }

  verdict(seq: number): SeqVerdict {
    if (seq === this.last + 1 || (this.jumped !== null && seq === this.jumped + 1)) return 'next';
    return seq <= this.last ? 'repeat' : 'out_of_sequence';
  }

  /** Takes `seq` as read (once its record is applied, or passed over); returns its verdict. */
  see(seq: number): SeqVerdict {
    const verdict = this.verdict(seq);
    if (verdict === 'next') {
      this.lastSeq = seq;
      this.jumped = null;
    } else if (verdict === 'out_of_sequence') this.jumped = seq;
    return verdict;
  }
}

export class OutboxWriter {
  readonly path: string;
  private seq: number;
  private readonly now: () => number;

  constructor(runDir: string, private readonly ids: { traceId: string; runId: string }, now: () => number = Date.now) {
    this.path = join(runDir, OUTBOX_FILE);
    this.now = now;
    // A killed predecessor may have left half a line; drop it, then continue its numbering as the ingestor follows it:
    // after the series, not after a last out-of-sequence line (which the ingestor passed over). Going on from the
    // largest number on any line went on from a stray line's too, or from one the reader refuses (a seq of 1.5 or
    // 2^53), and then every later record was refused as well.
    repairTornTail(this.path);
    const numbering = new OutboxSequence();
    for (const r of readWholeOutbox(runDir)) numbering.see(r.seq);
    this.seq = numbering.last;
  }

  write(draft: OutboxDraft): OutboxRecord {
    const record = { ...draft, seq: ++this.seq, traceId: this.ids.traceId, runId: this.ids.runId, at: this.now() } as OutboxRecord;
    appendJsonLine(this.path, record);
    return record;
  }
}
