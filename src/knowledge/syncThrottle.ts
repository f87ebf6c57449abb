/**
 * When an open knowledge handle scans its files again. A one-shot command
 * (interval 0) scans on every call; a long-lived process (the daemon's pool,
 * 1 s) scans at most once per interval, so a burst of searches costs one scan.
 * The slow sources (the run ledgers: a walk that grows with every run the
 * project has had, for the graph's consumed-by edges only) are scanned by a
 * one-shot command for a call that reads the graph, and at most once every
 * SLOW_INTERVALS intervals in a long-lived process. The code graph is built
 * once per handle in a long-lived process and on every call otherwise. A
 * read-only handle never scans.
 */
export interface SyncThrottle {
  /** Runs `scan` unless one ran within the interval; `all`: the slow sources too. `graph`: the call reads the graph (default). */
  files(scan: (all: boolean) => void, graph?: boolean): void;
  /** Runs `build` unless the code graph is already built (long-lived only). */
  code(build: () => Promise<unknown>): Promise<void>;
  /** A scan or build just ran outside the throttle (an explicit sync or rebuild; `all`: with the slow sources, by default). */
  scanned(opts?: { all?: boolean; codeStale?: boolean; codeBuilt?: boolean }): void;
}

/** A long-lived process scans the slow sources at most once per this many intervals (30 s in the daemon). */
export const SLOW_INTERVALS = 30;

export function createSyncThrottle(opts: { canWrite: boolean; intervalMs: number; now?: () => number }): SyncThrottle {
  const now = opts.now ?? Date.now;
  let lastScan = -Infinity;
  let lastAll = -Infinity;
  let codeBuilt = false;
  return {
    files(scan, graph = true) {
      if (!opts.canWrite) return;
      const t = now();
      if (opts.intervalMs > 0 && t - lastScan < opts.intervalMs) return;
      const all = opts.intervalMs === 0 ? graph : t - lastAll >= opts.intervalMs * SLOW_INTERVALS;
      scan(all);
      lastScan = t;
      if (all) lastAll = t;
    },
    async code(build) {
      if (!opts.canWrite || (codeBuilt && opts.intervalMs > 0)) return;
      await build();
      codeBuilt = true;
    },
    scanned(s = {}) {
      lastScan = now();
      if (s.all ?? true) lastAll = lastScan;
      if (s.codeStale) codeBuilt = false;
      if (s.codeBuilt) codeBuilt = true;
    },
  };
}
