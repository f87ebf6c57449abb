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
 * rankU for every task, in one pass. Dependencies on ids outside `tasks` are
 * ignored (they unlock nothing here). Throws DEPENDENCY_CYCLE naming the tasks
 * left on a cycle.
 */
export function rankAll(tasks: readonly RankInput[]): Map<string, number> {
  const index = new Map<string, number>();
  tasks.forEach((t, i) => index.set(t.id, i));
  const n = tasks.length;
  // dependents adjacency in CSR form: for each task, who depends on it.
  const outDegree = new Int32Array(n); // number of dependents not yet ranked
  const depIdx: number[][] = new Array(n);
  for (let i = 0; i < n; i++) {
    const list: number[] = [];
    for (const d of tasks[i]!.deps) {
      const j = index.get(d);
      if (j !== undefined) {
        list.push(j);
        outDegree[j]!++;
      }
    }
    depIdx[i] = list;
  }
  const rank = new Float64Array(n);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    rank[i] = baseScore(tasks[i]!);
    if (outDegree[i] === 0) stack.push(i);
  }
  let done = 0;
  // A task is final once all its dependents are; then it pushes its rank into its deps.
  while (stack.length) {
    const i = stack.pop()!;
    done++;
    for (const j of depIdx[i]!) {
      rank[j]! += rank[i]!;
      if (--outDegree[j]! === 0) stack.push(j);
    }
  }
  if (done < n) {
    const stuck = tasks.filter((_, i) => outDegree[i]! > 0).map((t) => t.id);
    throw new MaestroError('DEPENDENCY_CYCLE', `Dependency cycle among: ${stuck.slice(0, 20).join(', ')}.`, {
      details: { tasks: stuck },
    });
  }
  const out = new Map<string, number>();
  for (let i = 0; i < n; i++) out.set(tasks[i]!.id, rank[i]!);
  return out;
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
