/**
 * Scheduling scores (seed 002 §3.1, ARCHITECTURE §3). All pure; the clock is a
 * parameter.
 *
 *   scheduleScore = rankU + chainInertia + agingBonus − couplingPenalty
 *
 * rankU(t) = base(t) + Σ rankU(d) over the tasks d that depend on t (the work
 * finishing t unlocks). It is computed for the whole DAG in one memoised pass in
 * reverse topological order: O(tasks + edges). The naive form in the notes
 * recurses per task with a fresh cache, O(tasks × (tasks + edges)) for a whole
 * board; `bench/core.ts` measures both.
 */
import { MaestroError } from './errors.js';
import type { Priority } from './types.js';

const HOUR_MS = 60 * 60 * 1000;
/** The aging bonus grows linearly and reaches the base score after this long. */
export const AGING_HORIZON_HOURS = 48;
/** Subtracted per file a candidate shares with in-flight work; never a hard block. */
export const COUPLING_PENALTY_PER_FILE = 0.5;

export interface RankInput {
  id: string;
  priority: Priority;
  deps: readonly string[];
}

export function baseScore(task: { priority: Priority }): number {
  switch (task.priority) {
    case 0:
      return 3;
    case 1:
      return 2;
    case 2:
      return 1;
    default: {
      const never: never = task.priority;
      throw new MaestroError('BAD_INPUT', `Unknown priority ${String(never)}; expected 0, 1 or 2.`);
    }
  }
}

/**
 * rankU over a DAG held as integer indices: `base[i]` is task i's base score
 * and its dependencies are `depIdx[depStart[i] .. depStart[i + 1])` (CSR).
 * One linear pass (Kahn's order from the tasks nothing depends on): each
 * task's rank is final once all its dependents have added theirs, and then it
 * adds itself to each of its dependencies. O(tasks + edges), no maps, no
 * allocation beyond three typed arrays. Returns null when a cycle is left
 * (`pending` then marks its tasks).
 */
export function rankIndexed(base: Float64Array, depStart: Int32Array, depIdx: Int32Array, pending = new Int32Array(base.length)): Float64Array | null {
  const n = base.length;
  pending.fill(0);
  for (let k = 0, m = depStart[n]!; k < m; k++) pending[depIdx[k]!]!++;
  const rank = Float64Array.from(base);
  const stack = new Int32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) if (pending[i] === 0) stack[top++] = i;
  let done = 0;
  while (top > 0) {
    const i = stack[--top]!;
    done++;
    const r = rank[i]!;
    for (let k = depStart[i]!, end = depStart[i + 1]!; k < end; k++) {
      const j = depIdx[k]!;
      rank[j]! += r;
      if (--pending[j]! === 0) stack[top++] = j;
    }
  }
  return done < n ? null : rank;
}

/** The CSR form of `tasks` for rankIndexed; dependencies on ids outside `tasks` are dropped. */
export function indexDag(tasks: readonly RankInput[], index: ReadonlyMap<string, number>): { base: Float64Array; depStart: Int32Array; depIdx: Int32Array } {
  const n = tasks.length;
  let edges = 0;
  for (let i = 0; i < n; i++) edges += tasks[i]!.deps.length;
  const base = new Float64Array(n);
  const depStart = new Int32Array(n + 1);
  const depIdx = new Int32Array(edges);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const t = tasks[i]!;
    base[i] = baseScore(t);
    depStart[i] = k;
    for (const d of t.deps) {
      const j = index.get(d);
      if (j !== undefined) depIdx[k++] = j;
    }
  }
  depStart[n] = k;
  return { base, depStart, depIdx: depIdx.subarray(0, k) };
}

/**
 * rankU for every task, by id. Dependencies on ids outside `tasks` are
 * ignored (they unlock nothing here). Throws DEPENDENCY_CYCLE naming the
 * tasks left on a cycle.
 */
export function rankAll(tasks: readonly RankInput[]): Map<string, number> {
  const index = new Map<string, number>();
  for (let i = 0; i < tasks.length; i++) index.set(tasks[i]!.id, i);
  const { base, depStart, depIdx } = indexDag(tasks, index);
  const pending = new Int32Array(tasks.length);
  const rank = rankIndexed(base, depStart, depIdx, pending);
  if (!rank) {
    const stuck = tasks.filter((_, i) => pending[i]! > 0).map((t) => t.id);
    throw new MaestroError('DEPENDENCY_CYCLE', `Dependency cycle among: ${stuck.slice(0, 20).join(', ')}.`, {
      details: { tasks: stuck },
    });
  }
  // The id → index map becomes id → rank in place: overwriting a key costs less than a second map (bench/core.ts).
  for (let i = 0; i < tasks.length; i++) index.set(tasks[i]!.id, rank[i]!);
  return index;
}

/** Chain inertia: the base scores of the task's dependencies that are done. */
export function chainInertia(completedDeps: readonly { priority: Priority }[]): number {
  return completedDeps.reduce((sum, d) => sum + baseScore(d), 0);
}

/** min(base, waitHours / 48): a task that waited 48 h has earned its base again. */
export function agingBonus(task: { priority: Priority; createdAt: number }, now: number): number {
  const waitHours = Math.max(0, now - task.createdAt) / HOUR_MS;
  return Math.min(baseScore(task), waitHours / AGING_HORIZON_HOURS);
}

/** 0.5 per file the task shares with each in-flight task. */
export function couplingPenalty(task: { ownedFiles: readonly string[] }, inFlight: readonly { id?: string; ownedFiles: readonly string[] }[]): number {
  if (!task.ownedFiles.length) return 0;
  const mine = new Set(task.ownedFiles);
  let shared = 0;
  for (const other of inFlight) for (const f of new Set(other.ownedFiles)) if (mine.has(f)) shared++;
  return shared * COUPLING_PENALTY_PER_FILE;
}

export interface ScoreBreakdown {
  rankU: number;
  chainInertia: number;
  agingBonus: number;
  couplingPenalty: number;
}

export interface ScheduleScore {
  score: number;
  breakdown: ScoreBreakdown;
}

export function scheduleScore(input: {
  task: { priority: Priority; createdAt: number; ownedFiles: readonly string[] };
  rankU: number;
  completedDeps: readonly { priority: Priority }[];
  inFlight: readonly { ownedFiles: readonly string[] }[];
  now: number;
}): ScheduleScore {
  const breakdown: ScoreBreakdown = {
    rankU: input.rankU,
    chainInertia: chainInertia(input.completedDeps),
    agingBonus: agingBonus(input.task, input.now),
    couplingPenalty: couplingPenalty(input.task, input.inFlight),
  };
  return {
    score: breakdown.rankU + breakdown.chainInertia + breakdown.agingBonus - breakdown.couplingPenalty,
    breakdown,
  };
}

/**
 * The per-task recursion sketched in seed 002 §3.1, kept as the baseline for
 * `bench:core` and as an oracle in tests. Do not schedule with it.
 */
export function naiveRankU(taskId: string, byId: ReadonlyMap<string, RankInput>, dependents: ReadonlyMap<string, readonly string[]>, cache: Map<string, number>): number {
  const hit = cache.get(taskId);
  if (hit !== undefined) return hit;
  const task = byId.get(taskId);
  if (!task) throw new MaestroError('UNKNOWN_TASK', `Unknown task ${taskId}.`);
  const unlock = (dependents.get(taskId) ?? []).reduce((sum, d) => sum + naiveRankU(d, byId, dependents, cache), 0);
  const result = baseScore(task) + unlock;
  cache.set(taskId, result);
  return result;
}
