/**
 * POST /api/daemon/stop (`maestro stop`) as the daemon takes it: a request that comes while the daemon is still
 * starting (after it listens, before startDaemon returns) is kept, and acted on once the daemon is up, with its
 * handle: `maestro serve` stops as at its first SIGTERM, anything else stops the daemon with its own stop().
 */
import type { StopProgressView } from '../api/deps.js';
import type { StopPhase, StopProgressLine } from '../api/wire/daemons.js';

/** How long a graceful stop (SIGTERM, Ctrl-C, `maestro stop`) lets running stages go on before their workers are stopped. */
export const STOP_GRACE_MS = 30_000;

export class StopRequest {
  private asked = () => {};
  private readonly requested = new Promise<void>((resolve) => (this.asked = resolve));

  /** Called by the route once its answer is sent; a second call changes nothing. */
  readonly request = (): void => this.asked();

  /** The daemon, up: a request (made or to come) is acted on with it. */
  answeredBy<D extends { stop(): Promise<void> }>(daemon: D, onStopRequest: ((daemon: D) => Promise<void> | void) | undefined, onError: (err: Error) => void): D {
    void this.requested.then(() => (onStopRequest ?? ((d: D) => d.stop()))(daemon)).catch(onError);
    return daemon;
  }
}

/**
 * Where a stop has got (finishing stages, handing over, handed over), published for `maestro stop`, which follows it
 * through POST /api/daemon/stop?follow=true: a daemon on another host has no process the CLI can watch, and its port
 * is no sign of the hand-over. The daemon keeps its port open until the hand-over is done (answering only the stop
 * and health meanwhile), and waits for the answers following it to end before closing it.
 */
export class StopProgress implements StopProgressView {
  private line: StopProgressLine | null = null;
  private readonly listeners = new Set<(line: StopProgressLine) => void>();
  private readonly held = new Set<Promise<void>>();

  constructor(private readonly runsRunning: () => number) {}

  now(): StopProgressLine | null {
    return this.line && { ...this.line, runsRunning: this.runsRunning() };
  }

  set(phase: StopPhase): void {
    this.line = { phase, runsRunning: this.runsRunning() };
    for (const fn of this.listeners) fn(this.line);
  }

  onChange(fn: (line: StopProgressLine) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  hold(ended: Promise<void>): void {
    const p = ended.finally(() => this.held.delete(p));
    this.held.add(p);
  }

  /** Once the answers following the stop have ended: their last line is out before the port closes (at most `ms`). */
  async drained(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.held), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }
}
