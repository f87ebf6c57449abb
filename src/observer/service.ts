/**
 * ObserverService: the daemon's observer, built from one resolved
 * `ObserverConfig`, with a symmetric lifecycle (STYLE §3). It owns the hub
 * (the watcher on `wiki/sessions/`, its fallback poll, and when following the
 * live session and its runner) and the subscription that hands every update
 * to the host (the daemon's WebSocket). `start()` and `stop()` are
 * idempotent; after `stop()` no watcher, timer or listener of it is left.
 *
 * Updates travel on an ObserverEvents emitter the service creates (or the
 * host gives): its hub and the session it follows publish on it, and stop()
 * takes the service's listener off it.
 */
import type { ObserverConfig } from './config.js';
import { ObserverEventEmitter, type ObserverEvents, type ObserverUpdate } from './events.js';
import { ObserverHub } from './hub.js';

export interface ObserverServiceOptions {
  config: ObserverConfig;
  /** Keep the workspace's newest transcript live in this process (MAESTRO_OBSERVER_FOLLOW; hub.ts). */
  follow?: boolean;
  /** Where updates are published and heard; default: one of the service's own. */
  events?: ObserverEvents;
  /** The hub's fallback poll (1 s). */
  pollMs?: number;
  /** Every update, while started. */
  onUpdate?: (update: ObserverUpdate) => void;
  onError?: (err: Error) => void;
}

export class ObserverService {
  readonly config: ObserverConfig;
  readonly hub: ObserverHub;
  private readonly events: ObserverEvents;
  private readonly forward: (update: ObserverUpdate) => void;
  private started = false;

  constructor(private readonly options: ObserverServiceOptions) {
    this.config = options.config;
    this.events = options.events ?? new ObserverEventEmitter();
    this.forward = (update) => options.onUpdate?.(update);
    this.hub = new ObserverHub({
      config: options.config,
      events: this.events,
      follow: options.follow ?? false,
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  /** What the observer routes read: this workspace's wiki. */
  get routeDeps(): { wikiRoot: string; workspaceRoot: string } {
    return { wikiRoot: this.config.wikiRoot, workspaceRoot: this.config.workspaceRoot };
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    // Subscribed before the hub starts: its first tick may already publish.
    if (this.options.onUpdate) this.events.on('update', this.forward);
    this.hub.start();
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.hub.stop();
    this.events.off('update', this.forward);
  }
}
