/**
 * Scheduler: picks which ready tasks to claim. A task is claimable when it is
 * ready, unclaimed, past its backoff, and every dependency is done. Candidates
 * are ranked by scheduleScore (rankU over the remaining DAG + chain inertia +
 * aging − coupling with in-flight work); the claim itself is the store's
 * compare-and-set, so two schedulers (or daemons) never both win a task. Each
 * win is logged with its breakdown and the competitors it beat.
 */
import { rankAll, scheduleScore } from '../core/scoring.js';
import { FINISHED_STATUSES, IN_FLIGHT_STATUSES } from '../core/status.js';
import type { Project, Task } from '../core/types.js';
import { remoteOf } from './repos.js';
import type { ClaimDecision } from '../store/ops/claim.js';
import type { Candidate } from './candidate.js';
import { ReadyWork } from './readyWork.js';
import type { Store } from '../store/store.js';

export type { Candidate } from './candidate.js';

export type ClaimGuard = (task: Task) => Promise<{ cancel: string } | void>;

/**
 * Ranks the claimable tasks among `all` (every task the scheduler can see), best first:
 * the full re-rank ReadyWork's incremental one must agree with (bench/core.ts compares them).
 */
export function rankCandidates(all: readonly Task[], now: number): Candidate[] {
  const byId = new Map(all.map((t) => [t.id, t]));
  const active = all.filter((t) => !FINISHED_STATUSES.includes(t.status));
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

/** How many of the best candidates one claim transaction looks at, beyond the slots it fills: room to skip rows other claimers hold. */
const SLICE_EXTRA = 32;

function decisionOf(c: Candidate, candidates: readonly Candidate[]): ClaimDecision {
  const competitors = candidates.filter((o) => o !== c && o.task.projectId === c.task.projectId).slice(0, 10).map((o) => ({ taskId: o.task.id, score: o.score }));
  return { score: c.score, breakdown: c.breakdown, competitors };
}

/** How often the ranking model is rebuilt from the active tasks as a check (ReadyWork). */
const REBUILD_MS = 30_000;

export class Scheduler {
  /** The ranked claimable tasks, kept up to date from events (readyWork.ts). */
  readonly work: ReadyWork;

  constructor(
    private readonly store: Store,
    private readonly opts: { owner: string; leaseMs: number; guard?: ClaimGuard; rebuildMs?: number; onDrift?: (tasks: number) => void },
  ) {
    this.work = new ReadyWork(store, { rebuildMs: opts.rebuildMs ?? REBUILD_MS, onDrift: opts.onDrift });
  }

  /**
   * Claims up to `slots` tasks, at most `perProject(projectId)` more per
   * project, best first. Returns the tasks won.
   */
  async claim(slots: number, perProject: (projectId: string) => number): Promise<Task[]> {
    if (slots <= 0) return [];
    const candidates = await this.work.candidates();
    const won: Task[] = [];
    const taken = new Map<string, number>();
    const left = (projectId: string) => perProject(projectId) - (taken.get(projectId) ?? 0);
    let next = 0;
    // Each round claims from a ranked slice in one transaction. Candidates another claimer
    // holds are skipped there; a round that lost some fills the slots from the rest.
    while (won.length < slots && next < candidates.length) {
      const slice: Candidate[] = [];
      // With a before:claim hook, only as many as there are slots: the hook runs for each.
      const size = this.opts.guard ? slots - won.length : (slots - won.length) * 2 + SLICE_EXTRA;
      while (slice.length < size && next < candidates.length) {
        const c = candidates[next++]!;
        // Hooked: no more candidates of a project than it has room for. Unhooked, spares stand in for rows others hold.
        const queued = this.opts.guard ? slice.filter((o) => o.task.projectId === c.task.projectId).length : 0;
        if (left(c.task.projectId) - queued <= 0) continue;
        // The guard logs its own vetoes.
        const verdict = this.opts.guard ? await this.opts.guard(c.task) : undefined;
        if (!(verdict && 'cancel' in verdict)) slice.push(c);
      }
      if (!slice.length) break;
      const byId = new Map(slice.map((c) => [c.task.id, c]));
      const round = await this.store.tasks.claimBest({
        ranked: slice.map((c) => ({ id: c.task.id, projectId: c.task.projectId })),
        owner: this.opts.owner,
        leaseMs: this.opts.leaseMs,
        max: slots - won.length,
        perProject: left,
        decisionFor: (id) => decisionOf(byId.get(id)!, candidates),
      });
      for (const w of round) {
        taken.set(w.projectId, (taken.get(w.projectId) ?? 0) + 1);
        won.push({ ...byId.get(w.id)!.task, status: 'queued', claimedBy: this.opts.owner, attempt: w.attempt });
      }
    }
    return won;
  }
}

/**
 * Slots per project on this daemon (none for an archived one): its limit minus the in-flight tasks it holds
 * (claimed by it), and, for a project without a shared remote (worked on this
 * host only), minus its unclaimed ones too (approved tasks waiting to merge).
 * Other daemons' tasks run on their own hosts and do not count here.
 * `inFlight` is the tick's one listing (reconcile's): a task that left flight
 * since is counted once more, which only holds a slot back until the next tick.
 */
export function perProjectSlots(inFlight: readonly Task[], projects: readonly Project[], owner: string, limit: number): (projectId: string) => number {
  const shared = new Set(projects.filter((p) => remoteOf(p)).map((p) => p.id));
  const counts = new Map<string, number>();
  for (const t of inFlight) {
    const ours = t.claimedBy === owner || (t.claimedBy === null && !shared.has(t.projectId));
    if (ours) counts.set(t.projectId, (counts.get(t.projectId) ?? 0) + 1);
  }
  // An archived project takes no new work (its ready tasks wait for a restore).
  const archived = new Set(projects.filter((p) => p.archivedAt !== null).map((p) => p.id));
  return (projectId) => (archived.has(projectId) ? 0 : Math.max(0, limit - (counts.get(projectId) ?? 0)));
}
