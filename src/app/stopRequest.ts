/**
 * POST /api/daemon/stop (`maestro stop`) as the daemon takes it: a request that comes while the daemon is still
 * starting (after it listens, before startDaemon returns) is kept, and acted on once the daemon is up, with its
 * handle: `maestro serve` stops as at its first SIGTERM, anything else stops the daemon with its own stop().
 */

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
