/**
 * The one reconnect loop of the board's live connections (the SSE stream of a
 * task, the WebSocket feed): after a loss, open again after 2·retryMs, then
 * 4·, 8·, … up to 32·retryMs and never more than 10 s; a connection that
 * opens starts the backoff over. Whoever owns the connection says when it
 * opened and when it was lost; this only keeps time.
 */
export const MAX_RETRY_MS = 10_000;

export interface Reconnect {
  /** The connection is up: the next loss waits the shortest time again. */
  opened(): void;
  /** The connection is gone: `open` runs again after the backoff (unless stopped). */
  lost(): void;
  /** No more reopening; a pending one is cancelled. */
  stop(): void;
  readonly stopped: boolean;
}

/** The wait before reopening after the `attempt`-th loss in a row (1-based). */
export function backoffMs(attempt: number, retryMs: number): number {
  return Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(attempt, 5));
}

export function reconnect(open: () => void, retryMs = 500): Reconnect {
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  return {
    opened() {
      attempt = 0;
    },
    lost() {
      if (stopped) return;
      attempt++;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        if (!stopped) open();
      }, backoffMs(attempt, retryMs));
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
    get stopped() {
      return stopped;
    },
  };
}
