/**
 * Ingestor: tails each running run's outbox.ndjson from the offset persisted
 * in the store and turns records into events, status changes and stream
 * items. A record is applied once: the read position moves past each record
 * as it is applied, events carry the dedupe key `<runId>:<seq>` (a replay
 * after a crash between applying and saving the position), status changes
 * are guarded, final records are applied in one transaction with the offset
 * (outcomes.ts). Seqs are followed as the worker numbers them
 * (OutboxSequence): a record that is not the next one, a repeat of a seq
 * already applied or one out of sequence (a stray line: a corrupted write, a
 * bug), is passed over and logged with the file, its byte offset and its seq,
 * and the records after it are read on. A stray line is never applied: it
 * must not settle a run, ask a question or move a stream's Last-Event-ID past
 * the worker's records. Should the worker itself have jumped (a line of its
 * own lost), the record after the jump is the next again: one record lost,
 * and said, rather than the rest of the run. Tokens are not stored as events;
 * they go to SSE subscribers straight from here (and stay in the outbox for
 * replay). Each run's directory is watched, so a new record is read within
 * milliseconds rather than at the next tick.
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { coerceError } from '../core/errors.js';
import type { Run } from '../core/types.js';
import { OUTBOX_FILE, OutboxSequence, readOutbox, type ErrorRecord, type OutboxRecord, type ResultRecord, type SeqVerdict } from '../executor/protocol/outbox.js';
import { trackResource } from '../lib/resources.js';
import { advanceClaimed } from '../store/ops/claim.js';
import { appendEventOnce } from '../store/ops/events.js';
import { taskRow } from '../store/ops/getTask.js';
import { setOutboxProgress } from '../store/ops/runs.js';
import type { Store } from '../store/store.js';
import type { Bus } from '../lib/bus.js';
import { applyFinalRecord } from './outcomes.js';
import { toStreamItem } from './runControl.js';

interface Watched {
  watcher: FSWatcher;
  untrack: () => void;
  /** The project of the run's task, read with its first phase record (a task never changes project). */
  projectId?: string;
}

/** How far a run's outbox is applied: the byte offset of the first record not applied, and its numbering so far. */
interface Position {
  offset: number;
  seqs: OutboxSequence;
}

/** A record passed over because its seq was not the next one, as the log names it. */
interface OffSequence {
  offset: number;
  seq: number;
  expected: number;
  type: OutboxRecord['type'];
  verdict: Exclude<SeqVerdict, 'next'>;
}

/** At most this many off-sequence records are listed in one log line (the count says how many there were). */
const OFF_SEQUENCE_LISTED = 20;

export class Ingestor {
  /** Last heartbeat (or any record) per run, by the daemon's clock. */
  readonly lastSign = new Map<string, number>();
  /** When each run last finished a stage, by the daemon's clock. */
  readonly stageDoneAt = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** What runs' `onFinal` goes on doing (their knowledge finishes): `stop` waits for it. */
  private readonly afterFinal = new Set<Promise<void>>();
  private readonly again = new Set<string>();
  private readonly watched = new Map<string, Watched>();
  private readonly position = new Map<string, Position>();

  constructor(
    private readonly store: Store,
    private readonly bus: Bus,
    private readonly opts: {
      owner: string;
      leaseMs: number;
      onChange: () => void;
      onError: (err: Error) => void;
      /** Awaited before a run's outcome is committed: what another daemon acting on that outcome needs first (the task branch on a shared remote). */
      beforeFinal?: (run: Run) => Promise<void>;
      /**
       * After a run's outcome is committed. What it returns goes on in the background (the run's knowledge finished:
       * its ledger sealed and stored in the database); `stop` waits for it, so a stopping daemon lets its tasks go
       * only once what their runs proposed is stored for the daemon that takes them over.
       */
      onFinal: (run: Run) => void | Promise<void>;
      preFinal?: (run: Run, record: ResultRecord | ErrorRecord) => Promise<ResultRecord | ErrorRecord>;
      log?: { info(obj: Record<string, unknown>, msg: string): void };
    },
  ) {}

  /** Follow a run: watch its directory and read what is there. */
  follow(run: Run): void {
    if (!run.runDir || this.watched.has(run.id)) return;
    try {
      const watcher = watch(run.runDir, (_event, file) => {
        if (!file || file === OUTBOX_FILE) void this.ingest(run);
      });
      watcher.on('error', () => this.unfollow(run.id));
      const untrack = trackResource('watcher', `outbox of ${run.id}`, () => this.unfollow(run.id));
      this.watched.set(run.id, { watcher, untrack });
    } catch (err) {
      this.opts.onError(coerceError(err));
    }
    void this.ingest(run);
  }

  unfollow(runId: string): void {
    const w = this.watched.get(runId);
    if (!w) return;
    this.watched.delete(runId);
    w.watcher.close();
    w.untrack();
  }

  /**
   * Stops following outboxes and waits for the reads under way: a final record may be waiting on a project hook
   * (bounded by the hook's time limit), whose process must not outlive the daemon.
   */
  async stop(): Promise<void> {
    for (const id of [...this.watched.keys()]) this.unfollow(id);
    await Promise.all(this.inFlight.values());
    if (this.afterFinal.size) {
      // Said, as the stop's other waits are: a stop that takes a moment longer says what it waits for.
      this.opts.log?.info({ runs: this.afterFinal.size }, "waiting for finished runs' knowledge to be stored before their tasks are let go");
      await Promise.allSettled([...this.afterFinal]);
    }
  }

  /** The run's ingest under way, if one is (its final record may be waiting for the branch's push). */
  pending(runId: string): Promise<void> | undefined {
    return this.inFlight.get(runId);
  }

  /** Reads and applies what is new in the run's outbox; overlapping calls coalesce. */
  ingest(run: Run): Promise<void> {
    const running = this.inFlight.get(run.id);
    if (running) {
      this.again.add(run.id);
      return running;
    }
    const p = (async () => {
      try {
        do {
          this.again.delete(run.id);
          await this.readOnce(run);
        } while (this.again.has(run.id));
      } catch (err) {
        this.opts.onError(coerceError(err));
      } finally {
        this.inFlight.delete(run.id);
      }
    })();
    this.inFlight.set(run.id, p);
    return p;
  }

  private async readOnce(run: Run): Promise<void> {
    if (!run.runDir) return;
    const pos = this.positionOf(run);
    const { records, offsets, nextOffset, more, corrupt } = readOutbox(run.runDir, pos.offset);
    if (nextOffset === pos.offset) return;
    // Lines that are no record (something other than the worker wrote there) are passed over, once, and said.
    if (corrupt.length) this.opts.log?.info({ traceId: run.traceId, runId: run.id, lines: corrupt.map((c) => ({ line: c.line, text: c.text, problem: c.problem })) }, 'outbox lines that are not records were passed over');
    const offSequence: OffSequence[] = [];
    let changed = false;
    try {
      for (const [i, r] of records.entries()) {
        // Where the reader stands once this record is done: the next record (lines between were reported above).
        const after = offsets[i + 1] ?? nextOffset;
        const verdict = pos.seqs.verdict(r.seq);
        if (verdict !== 'next') offSequence.push({ offset: offsets[i]!, seq: r.seq, expected: pos.seqs.last + 1, type: r.type, verdict });
        else {
          this.lastSign.set(run.id, Date.now());
          // A worker stopped by SIGTERM (a daemon shutting down): not the end of the run.
          // The run stays running; the next worker on this directory resumes after the last finished stage.
          const interrupted = r.type === 'error' && r.code === 'INTERRUPTED';
          if ((r.type === 'result' || r.type === 'error') && !interrupted) return await this.applyFinal(run, r, pos, nextOffset);
          if (r.type === 'phase' && r.state === 'done') this.stageDoneAt.set(run.id, Date.now());
          changed = (await this.applyRecord(run, r)) || changed;
        }
        pos.seqs.see(r.seq);
        pos.offset = after;
      }
    } finally {
      if (offSequence.length) this.reportOffSequence(run, offSequence);
    }
    pos.offset = nextOffset;
    // A read takes OUTBOX_READ_BYTES at most: what is left is read next (ingest's loop), after this read's store writes.
    if (more) this.again.add(run.id);
    await setOutboxProgress(this.store.db, run.id, nextOffset, pos.seqs.last);
    if (changed) this.opts.onChange();
  }

  /** The run's position: in memory once read, else as the store saved it (a restarted daemon). */
  private positionOf(run: Run): Position {
    let pos = this.position.get(run.id);
    if (!pos) {
      pos = { offset: run.outboxOffset, seqs: new OutboxSequence(run.outboxSeq) };
      this.position.set(run.id, pos);
    }
    return pos;
  }

  /** Settles the run with its result or error record, in one transaction with the offset. */
  private async applyFinal(run: Run, r: ResultRecord | ErrorRecord, pos: Position, nextOffset: number): Promise<void> {
    const item = toStreamItem(run.taskId, r);
    await this.opts.beforeFinal?.(run);
    const final = this.opts.preFinal ? await this.opts.preFinal(run, r) : r;
    await this.store.db.transaction((q) => applyFinalRecord(q, run, final, { owner: this.opts.owner, now: this.store.clock(), offset: nextOffset }), 'run.final');
    if (item) this.bus.publishStream(item);
    this.opts.log?.info({ traceId: run.traceId, runId: run.id, taskId: run.taskId, kind: run.kind, outcome: final.type, ...(final.type === 'error' ? { code: final.code } : {}) }, 'run finished');
    pos.seqs.see(r.seq);
    pos.offset = nextOffset;
    this.unfollow(run.id);
    // What goes on after the outcome (the run's knowledge) is said when it fails, never thrown: a database restarted
    // under it made the daemon exit on the unhandled rejection (CI188, multihost's PostgreSQL restart).
    const after = this.opts.onFinal(run)?.catch((err: unknown) => this.opts.onError(coerceError(err)));
    if (after) {
      this.afterFinal.add(after);
      void after.finally(() => this.afterFinal.delete(after));
    }
    this.opts.onChange();
  }

  /** One log line for a read's records passed over for their seq: the run, the file, and each one's offset and seq. */
  private reportOffSequence(run: Run, records: OffSequence[]): void {
    this.opts.log?.info(
      { traceId: run.traceId, runId: run.id, file: join(run.runDir!, OUTBOX_FILE), count: records.length, records: records.slice(0, OFF_SEQUENCE_LISTED) },
      'outbox records out of sequence were passed over; the records after them are read on',
    );
  }

  /** The run's project: read once for a followed run, not with every phase record (its task and approvals). */
  private async projectOf(run: Run): Promise<string> {
    const watched = this.watched.get(run.id);
    if (watched?.projectId) return watched.projectId;
    const { projectId } = await this.store.tasks.row(run.taskId);
    if (watched) watched.projectId = projectId;
    return projectId;
  }

  /** Returns whether the record changed stored state worth announcing. */
  private async applyRecord(run: Run, r: OutboxRecord): Promise<boolean> {
    const item = toStreamItem(run.taskId, r);
    switch (r.type) {
      case 'token':
        if (item) this.bus.publishStream(item);
        return false;
      case 'heartbeat':
        return false;
      case 'phase': {
        await this.store.events.appendOnce(
          { projectId: await this.projectOf(run), taskId: run.taskId, runId: run.id, traceId: run.traceId, type: 'run.phase', payload: { kind: run.kind, stage: r.stage, state: r.state, ...(r.detail ? { detail: r.detail } : {}) } },
          `${run.id}:${r.seq}`,
        );
        if (item) this.bus.publishStream(item);
        return true;
      }
      case 'clarify': {
        await this.store.db.transaction(async (q) => {
          const task = await taskRow(q, run.taskId);
          const now = this.store.clock();
          const event = await appendEventOnce(
            q,
            { projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'run.clarify', payload: { question: r.question, clarifyId: r.clarifyId, stage: r.stage } },
            `${run.id}:${r.seq}`,
            now,
          );
          if (!event || (task.status !== 'executing' && task.status !== 'planning')) return;
          const won = await advanceClaimed(q, { id: task.id, owner: this.opts.owner, attempt: task.attempt, now, from: task.status, to: 'awaiting_input' });
          if (won) await appendEventOnce(q, { projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'task.status', payload: { from: task.status, to: 'awaiting_input', question: r.question } }, `${run.id}:${r.seq}:status`, now);
        }, 'run.clarify');
        if (item) this.bus.publishStream(item);
        return true;
      }
      default:
        return false;
    }
  }
}
