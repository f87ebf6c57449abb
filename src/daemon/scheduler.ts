/**
 * Scheduler: picks which ready tasks to claim. A task is claimable when it is
 * ready, unclaimed, past its backoff, and every dependency is done. Candidates
 * are ranked by scheduleScore (rankU over the remaining DAG + chain inertia +
 * aging − coupling with in-flight work); the claim itself is the store's
 * compare-and-set, so two schedulers (or daemons) never both win a task. Each
 * win is logged with its breakdown and the competitors it beat.
 */
import { rankAll, scheduleScore, type ScoreBreakdown } from '../core/scoring.js';
import { IN_FLIGHT_STATUSES } from '../core/status.js';
import type { Task } from '../core/types.js';
import type { Store } from '../store/store.js';

export interface Candidate {
  task: Task;
  score: number;
  breakdown: ScoreBreakdown;
}

export type ClaimGuard = (task: Task) => Promise<{ cancel: string } | void>;

const ACTIVE_EXCLUDED = new Set(['done', 'cancelled', 'superseded']);

/** Ranks the claimable tasks among `all` (every task the scheduler can see), best first. */
export function rankCandidates(all: readonly Task[], now: number): Candidate[] {
  const byId = new Map(all.map((t) => [t.id, t]));
  const active = all.filter((t) => !ACTIVE_EXCLUDED.has(t.status));
  const ranks = rankAll(active);
  const inFlight = all.filter((t) => IN_FLIGHT_STATUSES.includes(t.status));
  const candidates: Candidate[] = [];
  for (const task of all) {
    if (task.status !== 'ready' || task.claimedAt !== null) continue;
    if (task.nextEligibleAt !== null && task.nextEligibleAt > now) continue;
    const deps = task.deps.map((d) => byId.get(d));
    if (deps.some((d) => !d || d.status !== 'done')) continue;
    const s = scheduleScore({ task, rankU: ranks.get(task.id) ?? 0, completedDeps: deps as Task[], inFlight: inFlight.filter((t) => t.projectId === task.projectId), now });
    candidates.push({ task, score: s.score, breakdown: s.breakdown });
  }
  return candidates.sort((a, b) => b.score - a.score || a.task.createdAt - b.task.createdAt || a.task.id.localeCompare(b.task.id));
}

export class Scheduler {
  constructor(
    private readonly store: Store,
    private readonly opts: { owner: string; leaseMs: number; guard?: ClaimGuard },
  ) {}

  /**
   * Claims up to `slots` tasks, at most `perProject(projectId)` more per
   * project. Returns the tasks won.
   */
  async claim(slots: number, perProject: (projectId: string) => number): Promise<Task[]> {
    if (slots <= 0) return [];
    const all = await this.store.tasks.list({ limit: 100_000 });
    const candidates = rankCandidates(all, this.store.clock());
    const won: Task[] = [];
    const taken = new Map<string, number>();
    for (const c of candidates) {
      if (won.length >= slots) break;
      const used = taken.get(c.task.projectId) ?? 0;
      if (used >= perProject(c.task.projectId)) continue;
      if (this.opts.guard) {
        const verdict = await this.opts.guard(c.task);
        // The guard logs its own vetoes.
        if (verdict && 'cancel' in verdict) continue;
      }
      const competitors = candidates.filter((o) => o !== c && o.task.projectId === c.task.projectId).slice(0, 10).map((o) => ({ taskId: o.task.id, score: o.score }));
      // The claim, its decision and its event commit together (or not at all).
      const r = await this.store.tasks.claim(c.task.id, this.opts.owner, this.opts.leaseMs, { score: c.score, breakdown: c.breakdown, competitors });
      if (!r.won) continue;
      taken.set(c.task.projectId, used + 1);
      won.push({ ...c.task, status: 'queued', claimedBy: this.opts.owner, attempt: r.attempt });
    }
    return won;
  }
}
