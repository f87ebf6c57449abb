/**
 * Counts turns of the event loop (one per setImmediate phase) while `work` runs: a daemon's timers,
 * sockets and ticks get those turns. Work done in one synchronous stretch leaves the count at 0.
 */
export async function loopTurnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const turn = () => {
    turns++;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    await work();
  } finally {
    running = false;
  }
  return turns;
}
