/**
 * EventFeed: reads the event log after the last id it has seen and publishes
 * each event on the bus exactly once. It polls (events may be written by
 * other processes: the CLI, other daemons) and can be poked to read at once:
 * after a local write without a listener (`wrote`), and on PostgreSQL when
 * another daemon's write is announced by NOTIFY (src/store/pgListener.ts). While such a listener is up
 * the poll is only a safety net (`listeningPollMs`); while it is down the feed
 * polls every `pollMs`.
 *
 * On PostgreSQL, ids are handed out when a row is inserted but become
 * visible when its transaction commits, so a lower id can appear after a
 * higher one was read (two daemons writing at once). Skipped ids are
 * remembered and looked up again for `gapMs`; an event that turns up late is
 * published then (out of id order, still exactly once). Ids that never turn
 * up are rolled-back inserts or dedupe conflicts.
 */
import { coerceError } from '../core/errors.js';
import type { MaestroEvent } from '../core/types.js';
import { trackResource } from '../lib/resources.js';
import type { Store } from '../store/store.js';
import type { Bus } from '../lib/bus.js';

/** A jump bigger than this is not tracked id by id (a feed starting far behind, say). */
const MAX_GAP = 1000;

export interface EventFeedOptions {
  pollMs: number;
  /** The poll while a NOTIFY listener is up (default: pollMs). */
  listeningPollMs?: number;
  /** How long a skipped id is looked for (default 30 s); 0 turns the re-check off (SQLite commits in id order). */
  gapMs?: number;
  /** The payload of this process's own notifications (DBAdapter.notifyOrigin): `notified` reads nothing for them. */
  origin?: string;
  onError: (err: Error) => void;
}

export class EventFeed {
  private lastId = 0;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private untrack: (() => void) | null = null;
  private listening = false;
  /** Skipped ids → when they were first skipped. */
  private readonly missing = new Map<number, number>();
  /** Ids published straight after this process's commit, ahead of the read that will meet them. */
  private readonly early = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly bus: Bus,
    private readonly opts: EventFeedOptions,
  ) {}

  async start(): Promise<void> {
    if (this.timer) return;
    // Start at the end: clients load current state over REST, then follow the feed.
    const rows = await this.store.db.all<{ id: number | null }>(`SELECT MAX(id) AS id FROM events`);
    this.lastId = Number(rows[0]?.id ?? 0);
    this.arm();
    this.untrack = trackResource('timer', 'event feed poll', () => this.stop());
  }

  private arm(): void {
    if (this.timer) clearInterval(this.timer);
    const ms = this.listening ? (this.opts.listeningPollMs ?? this.opts.pollMs) : this.opts.pollMs;
    this.timer = setInterval(() => this.poke(), ms);
  }

  /** A NOTIFY listener came up (poll slowly, read now: notifications may have been missed) or went down (poll fast). */
  setListening(up: boolean): void {
    if (up === this.listening) return;
    this.listening = up;
    if (this.timer) this.arm();
    void this.poke();
  }

  /**
   * Publishes events this process just committed, at once (the path stream
   * items take): no read back, no wait behind other queries. The reads still
   * advance over them in id order and skip them, so each event is published
   * once and none written by another process is passed over.
   */
  publishDirect(events: readonly MaestroEvent[]): void {
    for (const e of events) {
      if (e.id <= this.lastId && !this.missing.has(e.id)) continue;
      if (this.early.has(e.id)) continue;
      this.early.add(e.id);
      this.bus.publishEvent(e);
    }
  }

  /**
   * A NOTIFY for the event log arrived: reads it, unless this process sent it. Its own events were published
   * as they committed (publishDirect); other processes' come with their own notifications.
   */
  notified(payload: string): void {
    if (this.opts.origin !== undefined && payload === this.opts.origin) return;
    void this.poke();
  }

  /**
   * This process wrote: its own events went out at commit (publishDirect), so a read is only for other
   * processes' writes, and only when no NOTIFY listener announces those (SQLite; PostgreSQL while the
   * listener is down). On PostgreSQL a read after every write of the orchestrator's was a third of a
   * daemon's reads of the log (bench:multihost), each finding nothing new.
   */
  wrote(): Promise<void> {
    return this.listening ? Promise.resolve() : this.poke();
  }

  /** Reads new events now (coalescing overlapping calls). */
  poke(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          await this.readGaps();
          for (;;) {
            const page = await this.store.events.list({ after: this.lastId, limit: 500 });
            for (const e of page.events) this.publish(e);
            if (page.nextAfter === null) break;
          }
        } while (this.again);
      } catch (err) {
        this.opts.onError(coerceError(err));
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  private publish(e: MaestroEvent): void {
    const gapMs = this.opts.gapMs ?? 30_000;
    if (gapMs > 0 && e.id > this.lastId + 1 && e.id - this.lastId <= MAX_GAP) {
      const now = Date.now();
      for (let id = this.lastId + 1; id < e.id; id++) this.missing.set(id, now);
    }
    this.lastId = e.id;
    if (this.early.delete(e.id)) return;
    this.bus.publishEvent(e);
  }

  private async readGaps(): Promise<void> {
    if (!this.missing.size) return;
    const cutoff = Date.now() - (this.opts.gapMs ?? 30_000);
    for (const [id, since] of this.missing) if (since < cutoff) this.missing.delete(id);
    const ids = [...this.missing.keys()].slice(0, 500);
    if (!ids.length) return;
    for (const e of await this.store.events.byIds(ids)) {
      if (!this.missing.delete(e.id)) continue;
      if (this.early.delete(e.id)) continue;
      this.bus.publishEvent(e);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.untrack?.();
    this.untrack = null;
    await this.reading;
  }
}
