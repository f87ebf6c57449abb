/**
 * Work run one at a time per key (a project's clone, a run's inbox), in the order it was asked for; a step
 * that fails does not stop the next. A key's entry goes once its queue is empty.
 */
export function oneAtATime(): <T>(key: string, step: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, step: () => Promise<T>): Promise<T> => {
    const next = (tails.get(key) ?? Promise.resolve()).then(step, step);
    const settled = next.catch(() => undefined);
    tails.set(key, settled);
    void settled.then(() => {
      if (tails.get(key) === settled) tails.delete(key);
    });
    return next;
  };
}
