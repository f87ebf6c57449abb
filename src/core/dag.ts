/** Dependency-graph checks: cycles, self-dependencies. Pure. */
import { MaestroError } from './errors.js';

export interface DagNode {
  id: string;
  deps: readonly string[];
}

/**
 * Returns one cycle as a closed path [a, b, …, a] (each depends on the next),
 * or null. Iterative three-colour DFS, so deep chains do not overflow the stack.
 */
export function findCycle(nodes: Iterable<DagNode>): string[] | null {
  const deps = new Map<string, readonly string[]>();
  for (const n of nodes) deps.set(n.id, n.deps);
  const WHITE = 0;
  const GREY = 1;
  const BLACK = 2;
  const colour = new Map<string, number>();
  for (const start of deps.keys()) {
    if ((colour.get(start) ?? WHITE) !== WHITE) continue;
    const path: string[] = [start];
    const cursor: number[] = [0];
    colour.set(start, GREY);
    while (path.length) {
      const top = path[path.length - 1]!;
      const i = cursor[cursor.length - 1]!;
      const next = (deps.get(top) ?? [])[i];
      if (next === undefined) {
        colour.set(top, BLACK);
        path.pop();
        cursor.pop();
        continue;
      }
      cursor[cursor.length - 1] = i + 1;
      if (!deps.has(next)) continue;
      const c = colour.get(next) ?? WHITE;
      if (c === GREY) return [...path.slice(path.indexOf(next)), next];
      if (c === WHITE) {
        colour.set(next, GREY);
        path.push(next);
        cursor.push(0);
      }
    }
  }
  return null;
}

export function assertAcyclic(nodes: Iterable<DagNode>, titles?: ReadonlyMap<string, string>): void {
  const cycle = findCycle(nodes);
  if (!cycle) return;
  const named = cycle.map((id) => (titles?.get(id) ? `${id} (${titles.get(id)})` : id));
  throw new MaestroError('DEPENDENCY_CYCLE', `Dependency cycle: ${named.join(' → ')}. Remove one of these dependencies.`, {
    details: { cycle },
  });
}
