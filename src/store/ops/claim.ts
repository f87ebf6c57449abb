/**
 * Claims: the compare-and-set that lets many workers (threads, processes,
 * daemons on other hosts) take tasks without a coordinator.
 *
 *   claim:     ready ∧ claimed_at IS NULL ∧ eligible  →  queued, owner, attempt + 1, lease
 *   heartbeat: extends the lease while (owner, attempt) still hold it
 *   expire:    in flight with a lease past due        →  ready, claim cleared; or, for a task
 *              whose finished stage another daemon can go on from (TAKEN_OVER_AT_STAGE), taken
 *              over where it stands: new owner, attempt + 1, lease (a taker with no slot free
 *              leaves it for a lease to a live daemon with one); or, when the expiring daemon
 *              is the owner itself (cut off from the database for a lease), renewed: same attempt,
 *              a task.renewed event
 *   release:   a stopping daemon ends the leases of its tasks with no run in flight, so that
 *              another daemon's expire takes them now rather than a lease later
 *   complete:  a fenced transition by (owner, attempt) with a live lease
 *   fail:      fenced, back to ready with a backoff, claim cleared
 *
 * Leases and the failure backoff are stamped and compared by one clock for all
 * daemons: the database's on PostgreSQL, where their hosts' clocks may disagree
 * (ops/dbClock.ts).
 *
 * (owner, attempt) is the fence: attempt only grows, so a claimer that lost
 * its lease (expired and re-claimed by someone else) can never complete or
 * fail the task afterwards. Each compare-and-set is a single UPDATE whose
 * WHERE clause is the whole check. The Store runs each one in a transaction
 * with the event (and, for a claim, the decision) it causes, so a crash between
 * statements never leaves a status without the event that set it.
 */
import { assertTransition, IN_FLIGHT_STATUSES, REQUEUEABLE_STATUSES, TAKEN_OVER_AT_STAGE, type TaskStatus } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable, SqlValue } from '../db.js';
import { toTask, type Row } from '../rows.js';
import { appendEvent } from './events.js';
import { listDecisions, recordDecision, type Competitor } from './decisions.js';
import type { ScoreBreakdown } from '../../core/scoring.js';
import { fieldSets, type TransitionFields } from './transitionTask.js';
import { dbNow } from './dbClock.js';
import { daemonsWithRoom } from './daemonRoom.js';

export interface ClaimResult {
  won: boolean;
  attempt: number;
}

/** Why the scheduler chose the task: logged with the claim (ops/decisions.ts). */
export interface ClaimDecision {
  score: number;
  breakdown: ScoreBreakdown;
  competitors: Competitor[];
}

/**
 * Ready, unclaimed and past its backoff; `$1` is the caller's clock. The backoff (`next_eligible_at`) is stamped
 * and compared by the lease clock (ops/dbClock.ts): on PostgreSQL a host running ahead would otherwise claim a
 * task another host failed before its backoff ended.
 */
export const claimable = (q: Pick<Queryable, 'dialect' | 'handClock'>) =>
  `status = 'ready' AND claimed_at IS NULL AND (next_eligible_at IS NULL OR next_eligible_at <= ${dbNow(q, '$1')})`;

export async function claimTask(db: Queryable, opts: { id: string; owner: string; now: number; leaseMs: number }): Promise<ClaimResult & { projectId?: string }> {
  const rows = await db.all<{ attempt: number; project_id: string }>(
    `UPDATE tasks SET status = 'queued', claimed_at = $1, claimed_by = $2, attempt = attempt + 1, lease_expires_at = ${dbNow(db, '$1')} + $3, updated_at = $1
     WHERE id = $4 AND ${claimable(db)}
     RETURNING attempt, project_id`,
    [opts.now, opts.owner, opts.leaseMs, opts.id],
  );
  return rows[0] ? { won: true, attempt: Number(rows[0].attempt), projectId: String(rows[0].project_id) } : { won: false, attempt: 0 };
}

/**
 * A claim with what it causes: the decision (when a scheduler chose the task)
 * and the `ready → queued` event. Run it inside one transaction.
 */
export async function claimAndRecord(q: Queryable, opts: { id: string; owner: string; now: number; leaseMs: number; decision?: ClaimDecision }): Promise<ClaimResult> {
  const r = await claimTask(q, opts);
  if (!r.won) return { won: false, attempt: 0 };
  const projectId = r.projectId!;
  const d = opts.decision;
  if (d) await recordDecision(q, { projectId, taskId: opts.id, owner: opts.owner, score: d.score, breakdown: d.breakdown, competitors: d.competitors, at: opts.now });
  const payload = { from: 'ready', to: 'queued', owner: opts.owner, attempt: r.attempt, ...(d ? { score: d.score } : {}) };
  await appendEvent(q, { projectId, taskId: opts.id, type: 'task.status', payload }, opts.now);
  return { won: true, attempt: r.attempt };
}

/** Ready, unclaimed, eligible tasks, oldest first. The scheduler ranks them; the claim decides. */
export async function listClaimable(db: Queryable, opts: { now: number; projectId?: string; limit?: number }): Promise<Task[]> {
  const params: SqlValue[] = [opts.now];
  let where = claimable(db);
  if (opts.projectId) {
    params.push(opts.projectId);
    where += ` AND project_id = $2`;
  }
  const limit = Math.min(Math.max(opts.limit ?? 500, 1), 10_000);
  return (await db.all<Row>(`SELECT * FROM tasks WHERE ${where} ORDER BY created_at, id LIMIT ${limit}`, params)).map((r) => toTask(r));
}

/**
 * Which tasks are claimable now, and when each last changed: the scheduler
 * re-reads in full only those whose `updated_at` moved (readyWork.ts). Small
 * rows through the claimable index.
 */
export async function claimableStamps(db: Queryable, opts: { now: number; limit?: number }): Promise<{ id: string; updatedAt: number }[]> {
  const limit = Math.min(Math.max(opts.limit ?? 10_000, 1), 10_000);
  const rows = await db.all<{ id: string; updated_at: number }>(
    `SELECT id, updated_at FROM tasks WHERE ${claimable(db)} ORDER BY created_at, id LIMIT ${limit}`,
    [opts.now],
  );
  return rows.map((r) => ({ id: r.id, updatedAt: Number(r.updated_at) }));
}

/** Statuses as an SQL list of literals (they are the fixed names of core/status.ts, never input). */
export const inList = (statuses: readonly TaskStatus[]) => statuses.map((s) => `'${s}'`).join(', ');
/** The claimer's fence with its placeholders numbered from `first`: id, owner, attempt, now (the lease still live). */
function fence(q: Queryable, first: number): string {
  return `id = $${first} AND claimed_by = $${first + 1} AND attempt = $${first + 2} AND lease_expires_at >= ${dbNow(q, `$${first + 3}`)} AND status IN (${inList(IN_FLIGHT_STATUSES)})`;
}

export interface Fence {
  id: string;
  owner: string;
  attempt: number;
  now: number;
}

export async function heartbeatClaim(db: Queryable, opts: Fence & { leaseMs: number }): Promise<boolean> {
  const changed = await db.run(`UPDATE tasks SET lease_expires_at = ${dbNow(db, '$5')} + $1 WHERE ${fence(db, 2)}`, [opts.leaseMs, opts.id, opts.owner, opts.attempt, opts.now]);
  return changed === 1;
}

/** A claim whose lease is past due; `$1` is the caller's clock (ops/dbClock.ts). */
const expired = (q: Queryable) => `status IN (${inList(REQUEUEABLE_STATUSES)}) AND lease_expires_at IS NOT NULL AND lease_expires_at < ${dbNow(q, '$1')}`;

/** Who takes over the tasks whose stage can go on elsewhere (TAKEN_OVER_AT_STAGE); without it every expired task goes to ready. */
export interface TakeOver {
  owner: string;
  leaseMs: number;
  /**
   * The taker has no run slot free: for a lease after a task's lease ended, it leaves the takeover to another live
   * daemon the registry shows with room (ops/daemonRoom.ts), which starts the task at once, where the busy one would
   * make it wait. With none, or once that lease passed (the other did not take it), it takes the task itself: a
   * task is never left with nobody to take it.
   */
  busy?: boolean;
}

/**
 * Sends every in-flight task whose lease is past due back to ready, with its
 * status event, and ends the runs it had (their daemon is gone or cut off).
 * With `takeOver`, a task in TAKEN_OVER_AT_STAGE is claimed by that daemon
 * where it stands instead (attempt + 1: the old claimer is fenced out), with a
 * `task.taken_over` event; and a task that daemon holds itself is renewed (a
 * `task.renewed` event), not expired: its lease ran out while it was cut off from the database (a tick
 * stuck in a query for longer than a lease), and taking its own task over paid
 * for a second review of work under way. Its run goes on (or, its worker gone,
 * resumes from its last finished stage, as after a restart: the orchestrator's
 * reconcile). Returns the ids taken back or over. Run it inside
 * one transaction: each task is a compare-and-set on the status read, so two
 * daemons expiring at once take each task back (or over) once.
 */
export async function expireClaims(q: Queryable, opts: { now: number; takeOver?: TakeOver }): Promise<string[]> {
  const due = await q.all<{ id: string; status: TaskStatus; project_id: string; claimed_by: string | null; attempt: number; overdue_ms: number }>(
    `SELECT id, status, project_id, claimed_by, attempt, ${dbNow(q, '$1')} - lease_expires_at AS overdue_ms FROM tasks WHERE ${expired(q)} ORDER BY id`,
    [opts.now],
  );
  const taken: string[] = [];
  let roomElsewhere: Promise<string[]> | undefined;
  for (const t of due) {
    if (opts.takeOver && t.claimed_by === opts.takeOver.owner) {
      await renewOwnExpired(q, { ...t, claimed_by: t.claimed_by }, opts.takeOver.leaseMs, opts.now);
      continue;
    }
    if (opts.takeOver?.busy && t.claimed_by !== null && TAKEN_OVER_AT_STAGE.includes(t.status) && Number(t.overdue_ms) < opts.takeOver.leaseMs) {
      // Asked once per expiry, and only when there is such a task: a live daemon is heard a quarter of a lease apart.
      roomElsewhere ??= daemonsWithRoom(q, { me: opts.takeOver.owner, now: opts.now, withinMs: Math.floor(opts.takeOver.leaseMs / 2) });
      if ((await roomElsewhere).some((name) => name !== t.claimed_by)) continue;
    }
    const over = opts.takeOver && t.claimed_by !== null && TAKEN_OVER_AT_STAGE.includes(t.status) ? await takeOverAtStage(q, { ...t, claimed_by: t.claimed_by }, opts.takeOver, opts.now) : null;
    if (over === null) {
      const changed = await q.run(
        `UPDATE tasks SET status = 'ready', claimed_at = NULL, claimed_by = NULL, lease_expires_at = NULL, updated_at = $1,
           last_run_error = 'lease expired: the claimer stopped heartbeating'
         WHERE ${expired(q)} AND id = $2 AND status = $3`,
        [opts.now, t.id, t.status],
      );
      if (changed !== 1) continue;
      await appendEvent(q, { projectId: t.project_id, taskId: t.id, type: 'task.status', payload: { from: t.status, to: 'ready', reason: 'lease expired', owner: t.claimed_by } }, opts.now);
    } else if (!over) continue;
    taken.push(t.id);
    await q.run(`UPDATE runs SET status = 'failed', ended_at = $1, error = 'its daemon lost the lease on the task' WHERE task_id = $2 AND status = 'running'`, [opts.now, t.id]);
  }
  return taken;
}

/**
 * The expiring daemon's own expired claim renewed (same attempt), with a `task.renewed` event: said, because the
 * daemon was cut off from the database for longer than a lease, and a person who saw the lease run out (task show's
 * "Its lease on the task has ended") sees why nobody took the task over. The event carries the running run's trace,
 * so the board's trace of that run shows it.
 */
async function renewOwnExpired(q: Queryable, t: { id: string; status: TaskStatus; project_id: string; claimed_by: string; attempt: number }, leaseMs: number, now: number): Promise<void> {
  const changed = await q.run(`UPDATE tasks SET lease_expires_at = ${dbNow(q, '$1')} + $2 WHERE ${expired(q)} AND id = $3 AND status = $4 AND claimed_by = $5`, [now, leaseMs, t.id, t.status, t.claimed_by]);
  if (changed !== 1) return;
  const run = await q.one<{ id: string; trace_id: string | null; kind: string }>(`SELECT id, trace_id, kind FROM runs WHERE task_id = $1 AND status = 'running' ORDER BY started_at DESC, id DESC LIMIT 1`, [t.id]);
  const goesOn = run ? `; its ${run.kind} run goes on (or resumes from its last finished stage)` : '';
  const reason = `the lease of ${t.claimed_by} ran out while it was cut off from the database, with the task ${t.status}: ${t.claimed_by} renewed its claim (the same attempt) and goes on with it${goesOn}`;
  const payload = { owner: t.claimed_by, status: t.status, attempt: Number(t.attempt), reason };
  await appendEvent(q, { projectId: t.project_id, taskId: t.id, runId: run?.id ?? null, traceId: run?.trace_id ?? null, type: 'task.renewed', payload }, now);
}

/** One expired task claimed by `by.owner` in its status (compare-and-set on the status and the old owner), with its event. Whether it was. */
async function takeOverAtStage(q: Queryable, t: { id: string; status: TaskStatus; project_id: string; claimed_by: string }, by: TakeOver, now: number): Promise<boolean> {
  const rows = await q.all<{ attempt: number }>(
    `UPDATE tasks SET claimed_by = $2, claimed_at = $1, attempt = attempt + 1, lease_expires_at = ${dbNow(q, '$1')} + $3, updated_at = $1
     WHERE ${expired(q)} AND id = $4 AND status = $5 AND claimed_by = $6
     RETURNING attempt`,
    [now, by.owner, by.leaseMs, t.id, t.status, t.claimed_by],
  );
  if (!rows[0]) return false;
  // The decision log says who holds the task now, marked as a takeover: the score it was claimed with, the taker's,
  // and no competitors beaten (nothing was ranked: the task was the lost daemon's). A task never ranked (claimed by
  // hand) has none.
  const [last] = await listDecisions(q, { taskId: t.id, limit: 1 });
  if (last) await recordDecision(q, { ...last, owner: by.owner, competitors: [], at: now, takenOver: { from: t.claimed_by, status: t.status } });
  const reason = `the lease of ${t.claimed_by} ended with the task ${t.status}: ${by.owner} goes on from there, with the work ${t.claimed_by} pushed`;
  await appendEvent(q, { projectId: t.project_id, taskId: t.id, type: 'task.taken_over', payload: { owner: by.owner, previousOwner: t.claimed_by, attempt: Number(rows[0].attempt), status: t.status, reason } }, now);
  return true;
}

/**
 * A stopping daemon lets go of the tasks it holds with no run in flight (between stages: an execute finished, a
 * review not started): their leases end now, so another daemon's next expireClaims takes them (over, where their
 * stage allows) at once instead of a lease later. The claim itself stays, so that the same daemon started again
 * before anyone else looked renews it and goes on (renewOwnedLeases), as after any restart. A task with a run
 * in flight keeps its lease: the run resumes from its last finished stage at the daemon's next start. Returns the
 * ids let go, each with a `task.released` event; run it inside one transaction.
 */
export async function releaseIdleClaims(q: Queryable, opts: { owner: string; now: number }): Promise<string[]> {
  // Not merging: a merge runs under the project's merge lease (daemon/mergeCoordinator.ts), not a task's claim.
  const now = dbNow(q, '$2');
  const idle = `claimed_by = $1 AND status IN (${inList(REQUEUEABLE_STATUSES.filter((s) => s !== 'merging'))}) AND lease_expires_at > ${now}
    AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.task_id = tasks.id AND runs.status = 'running')`;
  const held = await q.all<{ id: string; status: TaskStatus; project_id: string; attempt: number }>(`SELECT id, status, project_id, attempt FROM tasks WHERE ${idle} ORDER BY id`, [opts.owner, opts.now]);
  const released: string[] = [];
  for (const t of held) {
    const changed = await q.run(`UPDATE tasks SET lease_expires_at = ${now} WHERE ${idle} AND id = $3 AND attempt = $4`, [opts.owner, opts.now, t.id, t.attempt]);
    if (changed !== 1) continue;
    released.push(t.id);
    await appendEvent(q, { projectId: t.project_id, taskId: t.id, type: 'task.released', payload: { owner: opts.owner, status: t.status, reason: `${opts.owner} stopped with no run of the task in flight: its lease ends now` } }, opts.now);
  }
  return released;
}

/**
 * A fenced transition by the claimer. `to` must be legal from `from` (the
 * status the claimer believes the task is in). Leaving the in-flight statuses
 * releases the lease; claimed_at stays until the task is ready again.
 */
export async function advanceClaimed(db: Queryable, opts: Fence & { from: TaskStatus; to: TaskStatus; fields?: TransitionFields }): Promise<boolean> {
  assertTransition(opts.from, opts.to, opts.id);
  const params: SqlValue[] = [opts.to, opts.now];
  const sets = ['status = $1', 'updated_at = $2', ...fieldSets(opts.fields ?? {}, params)];
  if (opts.to === 'ready') sets.push('claimed_at = NULL', 'claimed_by = NULL', 'lease_expires_at = NULL');
  else if (!IN_FLIGHT_STATUSES.includes(opts.to)) sets.push('claimed_by = NULL', 'lease_expires_at = NULL');
  const first = params.length + 1;
  params.push(opts.id, opts.owner, opts.attempt, opts.now, opts.from);
  const changed = await db.run(`UPDATE tasks SET ${sets.join(', ')} WHERE ${fence(db, first)} AND status = $${first + 4}`, params);
  return changed === 1;
}

/** The claimer gives the task back after a failure: ready again once the backoff passes. */
export async function failClaim(db: Queryable, opts: Fence & { error: string; backoffMs: number }): Promise<boolean> {
  const changed = await db.run(
    `UPDATE tasks SET status = 'ready', claimed_at = NULL, claimed_by = NULL, lease_expires_at = NULL, last_run_error = $1,
       next_eligible_at = ${dbNow(db, '$3')} + $2, updated_at = $3
     WHERE ${fence(db, 4)} AND status IN (${inList(REQUEUEABLE_STATUSES)})`,
    [opts.error, opts.backoffMs, opts.now, opts.id, opts.owner, opts.attempt, opts.now],
  );
  return changed === 1;
}

/**
 * A daemon renews the leases of every in-flight task it still owns, in one
 * statement. This also covers a daemon restarted after its leases ran out:
 * as long as nobody expired and re-claimed a task meanwhile, it is still the
 * owner and adopts the task's running worker.
 */
export async function renewOwnedLeases(db: Queryable, opts: { owner: string; now: number; leaseMs: number }): Promise<number> {
  return db.run(`UPDATE tasks SET lease_expires_at = ${dbNow(db, '$3')} + $1 WHERE claimed_by = $2 AND status IN (${inList(IN_FLIGHT_STATUSES)})`, [opts.leaseMs, opts.owner, opts.now]);
}

/** How long until the task's lease ends (negative: it has ended), by the lease clock; null when it has none. */
export async function leaseEndsInMs(db: Queryable, opts: { id: string; now: number }): Promise<number | null> {
  const row = await db.one<{ ends_in: number | null }>(`SELECT lease_expires_at - ${dbNow(db, '$2')} AS ends_in FROM tasks WHERE id = $1`, [opts.id, opts.now]);
  return row?.ends_in == null ? null : Number(row.ends_in);
}
