/**
 * When an open knowledge handle scans its files again. A one-shot command
 * (interval 0) scans on every call; a long-lived process (the daemon's pool,
 * 1 s) scans at most once per interval, so a burst of searches costs one scan.
 * The code graph is built once per handle in a long-lived process and on
 * every call otherwise. A read-only handle never scans.
 */
export interface SyncThrottle {
  /** Runs `scan` unless one ran within the interval. */
  files(scan: () => void): void;
  /** Runs `build` unless the code graph is already built (long-lived only). */
  code(build: () => Promise<unknown>): Promise<void>;
  /** A scan or build just ran outside the throttle (an explicit sync or rebuild). */
  scanned(opts?: { codeStale?: boolean; codeBuilt?: boolean }): void;
}

export function createSyncThrottle(opts: { canWrite: boolean; intervalMs: number; now?: () => number }): SyncThrottle {
  const now = opts.now ?? Date.now;
  let lastScan = -Infinity;
  let codeBuilt = false;
  return {
    files(scan) {
      if (!opts.canWrite) return;
      const t = now();
      if (opts.intervalMs > 0 && t - lastScan < opts.intervalMs) return;
      scan();
      lastScan = t;
    },
    async code(build) {
      if (!opts.canWrite || (codeBuilt && opts.intervalMs > 0)) return;
      await build();
      codeBuilt = true;
    },
    scanned(s = {}) {
      lastScan = now();
      if (s.codeStale) codeBuilt = false;
      if (s.codeBuilt) codeBuilt = true;
    },
  };
}
