/**
 * A registry of the long-lived resources this process opened: database
 * handles, child processes, servers, timers that outlive a call. Each owner
 * registers on open and releases on close. Tests fail a case that leaves any
 * behind (test/helpers/leakCheck.ts); the daemon lists them on shutdown.
 */

export interface TrackedResource {
  readonly kind: 'database' | 'process' | 'server' | 'timer' | 'watcher' | 'other';
  readonly name: string;
  readonly openedAt: number;
  /** Closes the resource; used by the leak check to clean up after reporting. */
  readonly close: () => unknown;
}

const open = new Set<TrackedResource>();

/** Registers a resource; call the returned function when it is closed. */
export function trackResource(kind: TrackedResource['kind'], name: string, close: () => unknown): () => void {
  const entry: TrackedResource = { kind, name, openedAt: Date.now(), close };
  open.add(entry);
  return () => {
    open.delete(entry);
  };
}

export function openResources(): TrackedResource[] {
  return [...open];
}
