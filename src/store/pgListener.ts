/**
 * PgListener: one dedicated PostgreSQL connection that LISTENs on a few
 * channels and hands each notification to a callback. It is not a pool
 * client (a pooled connection may be handed to someone else, and its LISTEN
 * with it). When the connection drops (PostgreSQL restarted, network gone) it
 * reports `listening = false` and reconnects with a growing delay (250 ms up
 * to 5 s); notifications sent meanwhile are lost, so the owner falls back to
 * polling until `onState(true)` and then reads what it missed.
 */
import pg from 'pg';
import { trackResource } from '../lib/resources.js';

export interface PgListenerOptions {
  onNotify: (channel: string, payload: string) => void;
  /** Called with true once LISTEN is in place (again), false when the connection is lost. */
  onState: (listening: boolean, err?: Error) => void;
}

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

export class PgListener {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private delayMs = 250;
  private untrack: (() => void) | null = null;
  listening = false;

  constructor(
    private readonly url: string,
    private readonly channels: readonly string[],
    private readonly opts: PgListenerOptions,
  ) {
    for (const c of channels) if (!CHANNEL.test(c)) throw new Error(`not a channel name: ${c}`);
  }

  /** Connects once; on failure it keeps retrying in the background. Never throws. */
  async start(): Promise<void> {
    this.untrack ??= trackResource('database', 'postgres LISTEN connection', () => this.stop());
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000, keepAlive: true, keepAliveInitialDelayMillis: 5000 });
    this.client = client;
    client.on('notification', (msg) => {
      if (this.client === client) this.opts.onNotify(msg.channel, msg.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the LISTEN connection closed')));
    try {
      await client.connect();
      for (const c of this.channels) await client.query(`LISTEN ${c}`);
    } catch (err) {
      this.lost(client, err as Error);
      return;
    }
    if (this.client !== client || this.stopped) return;
    this.delayMs = 250;
    this.listening = true;
    this.opts.onState(true);
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.listening) {
      this.listening = false;
      this.opts.onState(false, err);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, this.delayMs);
    this.delayMs = Math.min(this.delayMs * 2, 5000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.untrack?.();
    this.untrack = null;
    const client = this.client;
    this.client = null;
    this.listening = false;
    if (client) await client.end().catch(() => undefined);
  }
}
