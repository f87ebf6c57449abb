/**
 * Blocks this thread for `ms`: for the few synchronous retries that must wait without returning to the
 * event loop (a lock taken in a synchronous write, a rename a reader holds, a WAL switch SQLite refused).
 */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
