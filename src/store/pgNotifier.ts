/**
 * EventNotifier: tells the other daemons on one PostgreSQL that events were
 * committed, outside the transactions that wrote them. A NOTIFY queued inside
 * a transaction makes its commit take PostgreSQL's database-wide notify lock
 * (held across the WAL flush), which serialised every claim behind every
 * other (migration 006). Instead the store pokes this notifier once a
 * transaction that appended events has committed, and it sends
 * `SELECT pg_notify('maestro_events', '<origin>')` on a pooled connection of its own
 * (the listeners read the log after their last id; the payload names the sending process, whose own
 * listener reads nothing for it: postgres.ts).
 *
 * Coalescing: the first poke sends at once; pokes that arrive while a send
 * is in flight, or within `gapMs` of its start, mark the notifier dirty, and
 * one more send goes out when the gap is over. So a burst of commits costs a
 * notification per `gapMs` at most, and every commit is followed by at least
 * one notification sent after it. `close()` sends a pending one without
 * waiting for the gap.
 *
 * A send that fails is dropped, not retried: it fails only when the pool
 * cannot reach PostgreSQL (which the daemon's other queries report), and each
 * listener's safety-net poll (EventFeed `listeningPollMs`, 2 s) reads the log
 * anyway, so a lost wake-up delays a remote client's update, it loses nothing.
 */

/**
 * At most one notification per this many ms from one process; a burst waits at most this long to be
 * announced. Each is a small transaction of its own (and a wake-up of every listening daemon): at 5 ms a
 * lone claimer running 1,000 claims/s sent about 200 a second, and bench:core's single PostgreSQL claimer
 * ran about 20 % slower than with the trigger (load 8–12); 20 ms keeps it to 50 a second.
 */
export const NOTIFY_GAP_MS = 20;

export interface EventNotifierOptions {
  gapMs?: number;
  /** Told of a send that failed (it is not retried). */
  onError?: (err: Error) => void;
}

export class EventNotifier {
  private running: Promise<void> | null = null;
  private dirty = false;
  private closed = false;
  private wake: (() => void) | null = null;
  private gapTimer: NodeJS.Timeout | null = null;
  /** When the last send began (performance.now()): the gap counts from there, across bursts. */
  private lastStart = -Infinity;
  /** Notifications sent so far (tests count them). */
  sent = 0;

  constructor(
    private readonly send: () => Promise<unknown>,
    private readonly opts: EventNotifierOptions = {},
  ) {}

  /**
   * Asks for a notification sent after this call. Resolves once one has gone
   * out (or failed, or the notifier closed); never rejects.
   */
  poke(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.dirty = true;
    this.running ??= this.loop().finally(() => (this.running = null));
    return this.running;
  }

  private async loop(): Promise<void> {
    while (this.dirty) {
      const wait = this.lastStart + (this.opts.gapMs ?? NOTIFY_GAP_MS) - performance.now();
      if (wait > 0 && !this.closed) await this.pause(wait);
      // Cleared before the send: a poke during it asks for the next one.
      this.dirty = false;
      this.lastStart = performance.now();
      try {
        await this.send();
        this.sent++;
      } catch (err) {
        this.opts.onError?.(err as Error);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      this.gapTimer = setTimeout(resolve, ms);
    }).finally(() => {
      if (this.gapTimer) clearTimeout(this.gapTimer);
      this.gapTimer = null;
      this.wake = null;
    });
  }

  /** Sends what is pending at once, then takes no more pokes. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.running;
  }
}
