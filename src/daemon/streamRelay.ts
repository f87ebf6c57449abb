/**
 * StreamRelay: carries a run's stream items (tokens, phases, questions,
 * results) to the other daemons on the same PostgreSQL, so an SSE client on
 * any daemon follows a task whichever daemon runs it. Items this daemon's
 * ingestor publishes are batched (in order) into NOTIFY maestro_stream
 * payloads of at most ~7.9 kB; an item bigger than that is parked in the
 * stream_overflow table and the payload carries its row id instead. Received
 * payloads from other daemons are published on the local bus in the order they
 * arrived. Parked rows older than ten minutes are deleted as new ones are
 * parked.
 */
import { z } from 'zod';
import { coerceError } from '../core/errors.js';
import type { DBAdapter } from '../store/db.js';
import type { Bus, StreamItem } from '../lib/bus.js';

export const STREAM_CHANNEL = 'maestro_stream';
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD = 7900;
const OVERFLOW_KEEP_MS = 10 * 60_000;

const item = z.object({
  id: z.string(),
  taskId: z.string(),
  runId: z.string(),
  seq: z.number(),
  kind: z.enum(['token', 'phase', 'clarify', 'result', 'error']),
  data: z.record(z.string(), z.unknown()),
});
const inline = z.object({ o: z.string(), items: z.array(item) });
const message = z.union([inline, z.object({ o: z.string(), ref: z.number().int() })]);

export class StreamRelay {
  private queue: StreamItem[] = [];
  private flushing: Promise<void> | null = null;
  private receiving: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: DBAdapter,
    private readonly origin: string,
    private readonly bus: Bus,
    private readonly opts: { onError: (err: Error) => void; now?: () => number },
  ) {}

  /** Queues a local item for the other daemons; sent in the next batch. */
  send(i: StreamItem): void {
    this.queue.push(i);
    this.schedule();
  }

  private schedule(): void {
    if (!this.flushing) this.flushing = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0);
        for (const payload of this.pack(batch)) await this.notify(payload);
      }
    } catch (err) {
      this.opts.onError(coerceError(err));
    } finally {
      this.flushing = null;
      if (this.queue.length) this.schedule();
    }
  }

  /** Payloads in order: runs of items that fit one payload, or one oversized item alone. */
  private pack(items: StreamItem[]): (string | StreamItem)[] {
    const out: (string | StreamItem)[] = [];
    const head = `{"o":${JSON.stringify(this.origin)},"items":[`;
    let parts: string[] = [];
    let size = head.length + 2;
    const close = () => {
      if (parts.length) out.push(`${head}${parts.join(',')}]}`);
      parts = [];
      size = head.length + 2;
    };
    for (const i of items) {
      const json = JSON.stringify(i);
      const bytes = Buffer.byteLength(json) + 1;
      if (head.length + 2 + bytes > MAX_PAYLOAD) {
        close();
        out.push(i);
        continue;
      }
      if (size + bytes > MAX_PAYLOAD) close();
      parts.push(json);
      size += bytes;
    }
    close();
    return out;
  }

  private async notify(payload: string | StreamItem): Promise<void> {
    if (typeof payload === 'string') {
      await this.db.run(`SELECT pg_notify($1, $2)`, [STREAM_CHANNEL, payload]);
      return;
    }
    const now = (this.opts.now ?? Date.now)();
    await this.db.transaction(async (q) => {
      await q.run(`DELETE FROM stream_overflow WHERE at < $1`, [now - OVERFLOW_KEEP_MS]);
      const row = await q.one<{ id: number }>(`INSERT INTO stream_overflow (payload, at) VALUES ($1, $2) RETURNING id`, [JSON.stringify({ o: this.origin, items: [payload] }), now]);
      await q.run(`SELECT pg_notify($1, $2)`, [STREAM_CHANNEL, JSON.stringify({ o: this.origin, ref: Number(row!.id) })]);
    });
  }

  /** A payload heard on the channel: publish other daemons' items locally, in arrival order. */
  receive(payload: string): void {
    this.receiving = this.receiving.then(async () => {
      try {
        const msg = message.parse(JSON.parse(payload));
        if (msg.o === this.origin) return;
        let items: StreamItem[];
        if ('ref' in msg) {
          const row = await this.db.one<{ payload: string }>(`SELECT payload FROM stream_overflow WHERE id = $1`, [msg.ref]);
          if (!row) return; // cleaned up already: the SSE replay still has it
          items = inline.parse(JSON.parse(row.payload)).items;
        } else items = msg.items;
        for (const i of items) this.bus.publishStream(i as StreamItem, { remote: true });
      } catch (err) {
        this.opts.onError(coerceError(err));
      }
    });
  }

  /** Sends what is queued and waits for received items to be published. */
  async stop(): Promise<void> {
    await this.flushing;
    await this.receiving;
  }
}
