/**
 * POST /api/daemon/stop (`maestro stop`) as the daemon takes it: a request that comes while the daemon is still
 * starting (after it listens, before startDaemon returns) is kept, and acted on once the daemon is up, with its
 * handle: `maestro serve` stops as at its first SIGTERM, anything else stops the daemon with its own stop().
 */
import type { FastifyInstance } from 'fastify';
import type { StopProgressView } from '../api/deps.js';
import { MaestroError } from '../core/errors.js';
import type { StopPhase, StopProgressLine } from '../api/wire/daemons.js';

/** How long a graceful stop (SIGTERM, Ctrl-C, `maestro stop`) lets running stages go on before their workers are stopped. */
export const STOP_GRACE_MS = 30_000;

export class StopRequest {
  /** Where the stop has got, for `maestro stop` (POST /api/daemon/stop?follow=true). */
  readonly progress: StopProgress;
  private closeApiOnce: () => Promise<void> = async () => {};

  /** `runsRunning`: the daemon's workers at work, said in the stop's progress. */
  constructor(runsRunning: () => number = () => 0) {
    this.progress = new StopProgress(runsRunning);
  }

  /**
   * The API during a stop: the returned cleanup (the stop's first step) makes it answer only the stop and its
   * health, 503 DAEMON_STOPPING to the rest; closeApi() (after the hand-over) closes it.
   */
  refuseDuringStop(app: FastifyInstance): () => void {
    const api = apiDuringStop(app, this.progress);
    this.closeApiOnce = api.close;
    return api.refuse;
  }

  /** Closes the API once the answers following the stop have ended (nothing to close before refuseDuringStop). */
  closeApi(): Promise<void> {
    return this.closeApiOnce();
  }

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

  /** The stop's part that `stop` does: finishing stages from its start, handing over once told, handed over at its end. */
  async through(stop: (onHandOver: () => void) => Promise<void>): Promise<void> {
    this.set('finishing-stages');
    await stop(() => this.set('handing-over'));
    this.set('handed-over');
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

/** What a stopping daemon still answers: the stop (a second `maestro stop` follows the same one) and its health. */
const STILL_ANSWERED = /^(POST \/api\/daemon\/stop|GET \/api\/health)(\?|$)/;

/**
 * The API during a stop: from `refuse()` on (the stop's first step) it answers only the stop and its health, 503
 * DAEMON_STOPPING to the rest; `close()` (after the hand-over) closes it once the answers following the stop have
 * ended, at most 5 s after their last line.
 */
function apiDuringStop(app: FastifyInstance, progress: StopProgress): { refuse(): void; close(): Promise<void> } {
  let stopping = false;
  app.addHook('onRequest', async (req) => {
    if (stopping && !STILL_ANSWERED.test(`${req.method} ${req.url}`)) {
      throw new MaestroError('DAEMON_STOPPING', 'This daemon is stopping: its running stages finish and it hands its tasks over, then it exits. `maestro stop` follows it; ask another daemon, or this one once it is started again.');
    }
  });
  return {
    refuse: () => {
      stopping = true;
    },
    close: async () => {
      await progress.drained(5_000);
      await app.close();
    },
  };
}
