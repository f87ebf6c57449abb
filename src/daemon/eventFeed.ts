/**
 * EventFeed: reads the event log after the last id it has seen and publishes
 * each event on the bus, in order, exactly once. It polls (events may be
 * written by other processes: the CLI, other daemons) and can be poked to read
 * at once after a local write, so local changes reach clients without waiting
 * for the next poll.
 */
import { coerceError } from '../core/errors.js';
import { trackResource } from '../lib/resources.js';
import type { Store } from '../store/store.js';
import type { Bus } from './bus.js';

export class EventFeed {
  private lastId = 0;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private untrack: (() => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly bus: Bus,
    private readonly opts: { pollMs: number; onError: (err: Error) => void },
  ) {}

  async start(): Promise<void> {
    if (this.timer) return;
    // Start at the end: clients load current state over REST, then follow the feed.
    const rows = await this.store.db.all<{ id: number | null }>(`SELECT MAX(id) AS id FROM events`);
    this.lastId = Number(rows[0]?.id ?? 0);
    this.timer = setInterval(() => this.poke(), this.opts.pollMs);
    this.untrack = trackResource('timer', 'event feed poll', () => this.stop());
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
          for (;;) {
            const page = await this.store.events.list({ after: this.lastId, limit: 500 });
            for (const e of page.events) {
              this.lastId = e.id;
              this.bus.publishEvent(e);
            }
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

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.untrack?.();
    this.untrack = null;
    await this.reading;
  }
}
