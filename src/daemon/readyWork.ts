/**
 * ReadyWork: the scheduler's view of what can be claimed, kept up to date from
 * the event log instead of listing every task on every tick.
 *
 * - rankU of the active DAG (tasks not done, cancelled or superseded) lives in
 *   an IncrementalRanking, fed by the task events after the last one seen
 *   (creations, edits, status changes): each tick reads only the tasks those
 *   events name.
 * - Which tasks are claimable is read fresh each tick through the claimable
 *   index (ready, unclaimed, past their backoff) as small (id, updated_at)
 *   rows; a task whose updated_at moved is read again in full. So what is
 *   claimed, and the dependencies checked, never rest on the model: a missed
 *   event can only make a score stale.
 * - Every `rebuildMs` the model is rebuilt from the active tasks as a check
 *   (`drift` counts the tasks it had wrong). On PostgreSQL a lower event id can
 *   commit after a higher one was read; the rebuild picks such a change up.
 *
 * So a tick costs in proportion to ready work and to what changed since the
 * last tick, never to history (done tasks are read only as dependencies, once).
 */
import { IncrementalRanking } from '../core/ranking.js';
import { scheduleScore } from '../core/scoring.js';
import { FINISHED_STATUSES, IN_FLIGHT_STATUSES, TASK_STATUSES } from '../core/status.js';
import type { Priority, Task } from '../core/types.js';
import type { Store } from '../store/store.js';
import type { Candidate } from './candidate.js';

const ACTIVE_STATUSES = TASK_STATUSES.filter((s) => !FINISHED_STATUSES.includes(s));

export interface ReadyWorkOptions {
  /** How often the model is rebuilt from scratch as a check. */
  rebuildMs: number;
  /** Told how many tasks a rebuild found ranked wrong (0 is the normal case). */
  onDrift?: (tasks: number) => void;
}

export class ReadyWork {
  private ranking = new IncrementalRanking();
  private readonly active = new Map<string, Task>();
  /** Done tasks some claimable task depended on: done is final, so they are read once. */
  private readonly done = new Map<string, Priority>();
  private lastEventId = 0;
  private rebuiltAt = Number.NEGATIVE_INFINITY;
  rebuilds = 0;
  drift = 0;

  constructor(
    private readonly store: Store,
    private readonly opts: ReadyWorkOptions,
  ) {}

  /** The claimable tasks whose dependencies are all done, ranked best first. */
  async candidates(): Promise<Candidate[]> {
    const now = this.store.clock();
    if (now - this.rebuiltAt >= this.opts.rebuildMs) await this.rebuild(now);
    else await this.catchUp();
    const ready = await this.readyNow();
    await this.loadDeps(ready);
    const inFlight = new Map<string, Task[]>();
    for (const t of this.active.values()) if (IN_FLIGHT_STATUSES.includes(t.status)) (inFlight.get(t.projectId) ?? inFlight.set(t.projectId, []).get(t.projectId)!).push(t);
    const candidates: Candidate[] = [];
    for (const task of ready) {
      const completed = task.deps.map((d) => this.done.get(d));
      if (completed.some((p) => p === undefined)) continue;
      const s = scheduleScore({ task, rankU: this.ranking.rankOf(task.id), completedDeps: completed.map((priority) => ({ priority: priority! })), inFlight: inFlight.get(task.projectId) ?? [], now });
      candidates.push({ task, score: s.score, breakdown: s.breakdown });
    }
    return candidates.sort((a, b) => b.score - a.score || a.task.createdAt - b.task.createdAt || a.task.id.localeCompare(b.task.id));
  }

  /** The claimable tasks as they are now: small rows through the index, full rows only for what changed. */
  private async readyNow(): Promise<Task[]> {
    const stamps = await this.store.tasks.claimableStamps(10_000);
    const stale = stamps.filter((s) => this.active.get(s.id)?.updatedAt !== s.updatedAt).map((s) => s.id);
    for (const t of await this.store.tasks.byIds(stale)) this.apply(t);
    // A task changed again between the two reads is left to the next tick.
    return stamps.map((s) => this.active.get(s.id)).filter((t): t is Task => t !== undefined && t.status === 'ready');
  }

  private apply(task: Task): void {
    if (FINISHED_STATUSES.includes(task.status)) {
      this.active.delete(task.id);
      this.ranking.remove(task.id);
      if (task.status === 'done') this.done.set(task.id, task.priority);
    } else {
      this.active.set(task.id, task);
      this.ranking.upsert(task);
    }
  }

  /** Reads the dependencies of ready tasks the model knows nothing about (done ones, mostly). */
  private async loadDeps(ready: readonly Task[]): Promise<void> {
    const unknown = new Set<string>();
    for (const t of ready) for (const d of t.deps) if (!this.active.has(d) && !this.done.has(d)) unknown.add(d);
    if (unknown.size) for (const t of await this.store.tasks.byIds(unknown)) this.apply(t);
  }

  /** Applies the task events written since the last tick. */
  private async catchUp(): Promise<void> {
    for (;;) {
      const changes = await this.store.events.taskChangesAfter(this.lastEventId, 1000);
      if (!changes.length) return;
      const ids = new Set<string>();
      for (const e of changes) {
        if (e.taskId) ids.add(e.taskId);
        // A new version: the tasks that depended on the old one now depend on it (ops/gates.ts).
        if (e.type === 'task.created' && typeof e.payload.parentVersionId === 'string') for (const d of this.ranking.dependentsOf(e.payload.parentVersionId)) ids.add(d);
      }
      const found = await this.store.tasks.byIds(ids);
      for (const t of found) this.apply(t);
      const seen = new Set(found.map((t) => t.id));
      for (const id of ids) {
        if (seen.has(id)) continue;
        this.active.delete(id);
        this.ranking.remove(id);
      }
      this.lastEventId = changes[changes.length - 1]!.id;
      if (changes.length < 1000) return;
    }
  }

  /** Builds the model again from the active tasks; counts what the incremental one had wrong. */
  private async rebuild(now: number): Promise<void> {
    // Compare like with like: the model first takes in everything up to now. (A change committed
    // between this catch-up and the listing below is counted as drift once: a log line, no more.)
    if (this.rebuilds > 0) await this.catchUp();
    // The event position before the listing: a change committed while we list is applied again next tick (harmless).
    const position = await this.store.events.lastId();
    const tasks = await this.store.tasks.list({ status: ACTIVE_STATUSES, limit: 100_000 });
    const fresh = new IncrementalRanking();
    for (const t of tasks) fresh.upsert(t);
    if (this.rebuilds > 0) {
      const before = this.ranking.snapshot();
      const after = fresh.snapshot();
      let wrong = 0;
      for (const [id, r] of after) if (!(Math.abs((before.get(id) ?? Number.NaN) - r) <= 1e-9 * Math.max(1, Math.abs(r)))) wrong++;
      for (const id of before.keys()) if (!after.has(id)) wrong++;
      this.drift += wrong;
      this.opts.onDrift?.(wrong);
    }
    this.ranking = fresh;
    this.active.clear();
    for (const t of tasks) this.active.set(t.id, t);
    this.done.clear();
    this.lastEventId = position;
    this.rebuiltAt = now;
    this.rebuilds++;
  }
}
