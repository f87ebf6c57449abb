/**
 * Ingestor: tails each running run's outbox.ndjson from the offset persisted
 * in the store and turns records into events, status changes and stream
 * items. A record is applied once: events carry the dedupe key
 * `<runId>:<seq>`, status changes are guarded, final records are applied in
 * one transaction with the offset (outcomes.ts). Tokens are not stored as
 * events; they go to SSE subscribers straight from here (and stay in the
 * outbox for replay). Each run's directory is watched, so a new record is read
 * within milliseconds rather than at the next tick.
 */
import { watch, type FSWatcher } from 'node:fs';
import { coerceError } from '../core/errors.js';
import type { Run } from '../core/types.js';
import { OUTBOX_FILE, readOutbox, type ErrorRecord, type OutboxRecord, type ResultRecord } from '../executor/protocol/outbox.js';
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

export class Ingestor {
  /** Last heartbeat (or any record) per run, by the daemon's clock. */
  readonly lastSign = new Map<string, number>();
  /** When each run last finished a stage, by the daemon's clock. */
  readonly stageDoneAt = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly watched = new Map<string, Watched>();
  private readonly position = new Map<string, { offset: number; seq: number }>();

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
      onFinal: (run: Run) => void;
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

  stop(): void {
    for (const id of [...this.watched.keys()]) this.unfollow(id);
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
    const pos = this.position.get(run.id) ?? { offset: run.outboxOffset, seq: run.outboxSeq };
    const { records, nextOffset, corrupt } = readOutbox(run.runDir, pos.offset);
    if (nextOffset === pos.offset) return;
    // Lines that are no record (something other than the worker wrote there) are passed over, once, and said.
    if (corrupt.length) this.opts.log?.info({ traceId: run.traceId, runId: run.id, lines: corrupt.map((c) => ({ line: c.line, text: c.text, problem: c.problem })) }, 'outbox lines that are not records were passed over');
    let changed = false;
    for (const r of records) {
      if (r.seq <= pos.seq) continue;
      this.lastSign.set(run.id, Date.now());
      if (r.type === 'error' && r.code === 'INTERRUPTED') {
        // A worker stopped by SIGTERM (a daemon shutting down): not the end of the run.
        // The run stays running; the next worker on this directory resumes after the last finished stage.
        pos.seq = r.seq;
        continue;
      }
      if (r.type === 'phase' && r.state === 'done') this.stageDoneAt.set(run.id, Date.now());
      if (r.type === 'result' || r.type === 'error') {
        const item = toStreamItem(run.taskId, r);
        await this.opts.beforeFinal?.(run);
        const final = this.opts.preFinal ? await this.opts.preFinal(run, r) : r;
        await this.store.db.transaction((q) => applyFinalRecord(q, run, final, { owner: this.opts.owner, now: this.store.clock(), offset: nextOffset }), 'run.final');
        if (item) this.bus.publishStream(item);
        this.opts.log?.info({ traceId: run.traceId, runId: run.id, taskId: run.taskId, kind: run.kind, outcome: final.type, ...(final.type === 'error' ? { code: final.code } : {}) }, 'run finished');
        this.position.set(run.id, { offset: nextOffset, seq: r.seq });
        this.unfollow(run.id);
        this.opts.onFinal(run);
        this.opts.onChange();
        return;
      }
      changed = (await this.applyRecord(run, r)) || changed;
      pos.seq = r.seq;
    }
    pos.offset = nextOffset;
    this.position.set(run.id, pos);
    await setOutboxProgress(this.store.db, run.id, nextOffset, pos.seq);
    if (changed) this.opts.onChange();
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
