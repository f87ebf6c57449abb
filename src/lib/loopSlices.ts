/**
 * Long synchronous work cut into slices that give the event loop a turn: `await turn()` between two steps yields
 * (setImmediate) once `sliceMs` has passed since the last turn, and costs a clock read otherwise.
 */
import { setImmediate } from 'node:timers/promises';

export function loopSlices(sliceMs: number): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await setImmediate();
    since = performance.now();
  };
}
