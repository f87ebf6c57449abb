/**
 * rankU kept up to date as tasks change, instead of re-ranked from scratch on
 * every scheduler tick. The model holds the active DAG (every task not done,
 * cancelled or superseded). A change to a task (created, its deps or priority
 * edited, a status in or out of the active set) marks it dirty, and with it
 * the dependencies it gained or lost. rankU(t) depends only on t's base and
 * its dependents' ranks, so only the dirty tasks and everything upstream of
 * them (their transitive dependencies) can change: `settle()` re-ranks that
 * closure in reverse topological order and leaves the rest alone.
 *
 * The result always equals `rankAll` over the active tasks (ranking.test.ts
 * checks it on random histories with fast-check); the scheduler rebuilds the
 * model from scratch now and then as a check.
 */
import { baseScore, type RankInput } from './scoring.js';

export class IncrementalRanking {
  private readonly nodes = new Map<string, RankInput>();
  /** id → the active tasks that list it among their deps (whether or not it is active itself). */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly rank = new Map<string, number>();
  private readonly dirty = new Set<string>();
  /** Tasks left on a dependency cycle at the last settle (ranked by their base only). */
  cyclic: string[] = [];

  get size(): number {
    return this.nodes.size;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  /** The active tasks that depend on `id` (e.g. to re-read them when `id` is replaced by a new version). */
  dependentsOf(id: string): string[] {
    return [...(this.dependents.get(id) ?? [])];
  }

  /** Adds an active task or replaces its priority and deps. */
  upsert(task: RankInput): void {
    const node: RankInput = { id: task.id, priority: task.priority, deps: [...new Set(task.deps)] };
    this.unlink(task.id);
    this.nodes.set(task.id, node);
    for (const d of node.deps) {
      let set = this.dependents.get(d);
      if (!set) this.dependents.set(d, (set = new Set()));
      set.add(task.id);
      this.dirty.add(d);
    }
    this.dirty.add(task.id);
  }

  /** Takes a task out of the active DAG (it is done, cancelled or superseded). */
  remove(id: string): void {
    if (!this.nodes.has(id)) return;
    this.unlink(id);
    this.nodes.delete(id);
    this.rank.delete(id);
    this.dirty.delete(id);
  }

  private unlink(id: string): void {
    const old = this.nodes.get(id);
    if (!old) return;
    for (const d of old.deps) {
      const set = this.dependents.get(d);
      set?.delete(id);
      if (set && !set.size) this.dependents.delete(d);
      this.dirty.add(d);
    }
  }

  /** rankU of an active task (0 for one outside the model). */
  rankOf(id: string): number {
    if (this.dirty.size) this.settle();
    return this.rank.get(id) ?? 0;
  }

  /** Every active task's rankU. */
  snapshot(): Map<string, number> {
    if (this.dirty.size) this.settle();
    return new Map(this.rank);
  }

  /** Re-ranks the dirty tasks and everything upstream of them. */
  settle(): void {
    const closure = new Set<string>();
    const stack = [...this.dirty].filter((id) => this.nodes.has(id));
    this.dirty.clear();
    while (stack.length) {
      const id = stack.pop()!;
      if (closure.has(id)) continue;
      closure.add(id);
      for (const d of this.nodes.get(id)!.deps) if (this.nodes.has(d) && !closure.has(d)) stack.push(d);
    }
    // Kahn's order inside the closure: a task is ranked once its dependents in the closure are.
    const pending = new Map<string, number>();
    for (const id of closure) pending.set(id, 0);
    for (const id of closure) for (const d of this.nodes.get(id)!.deps) if (closure.has(d)) pending.set(d, pending.get(d)! + 1);
    const ready = [...closure].filter((id) => pending.get(id) === 0);
    let ranked = 0;
    while (ready.length) {
      const id = ready.pop()!;
      ranked++;
      const node = this.nodes.get(id)!;
      let r = baseScore(node);
      for (const dep of this.dependents.get(id) ?? []) r += this.rank.get(dep) ?? 0;
      this.rank.set(id, r);
      for (const d of node.deps) {
        if (!closure.has(d)) continue;
        const left = pending.get(d)! - 1;
        pending.set(d, left);
        if (left === 0) ready.push(d);
      }
    }
    this.cyclic = ranked < closure.size ? [...closure].filter((id) => pending.get(id)! > 0) : [];
    for (const id of this.cyclic) this.rank.set(id, baseScore(this.nodes.get(id)!));
  }
}
