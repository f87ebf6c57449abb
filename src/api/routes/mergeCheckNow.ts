/**
 * A task in `merging` whose merge check run is at work (daemon/mergeQueue.ts) looks stuck on the board: nothing says
 * main is being merged into its branch and the project's checks run on that. This reads what the run is doing from its
 * newest phase (the merge, or `check:<name>`) and the round from the `merge.check` event that opened it. A check the
 * train opened with no run yet says why (store/ops/mergeCheckAtWork.ts): its run is starting, or waits for a worker
 * slot, or the daemon that owes it is gone; else the task looked stuck as well, and before the states were told apart
 * every check read "waiting for a worker" while its run was being started on a free slot, or after its daemon died.
 * The tasks of the project waiting behind that check (mergeTurnNow) say whose check it is and that they land after it.
 */
import { DEFAULTS } from '../../config/defaults.js';
import type { CardMergeCheck, CardMergeTurn } from '../../core/taskSummary.js';
import type { Run, Task } from '../../core/types.js';
import { DAEMON_STALE_LEASES } from '../../store/ops/daemons.js';
import { mergeCheckAtWork, type MergeCheckAtWork } from '../../store/ops/mergeCheckAtWork.js';
import type { Store } from '../../store/store.js';
import { ridersOf } from '../../daemon/mergeBatch.js';
import type { ApiDeps } from '../deps.js';
import type { TaskDetail } from '../wire/responses.js';

/**
 * Which daemons count as alive for a check they owe: as this daemon's trains judge it before taking the check over
 * (conflictHeldElsewhere: its own lease, DAEMON_STALE_LEASES of them), so "gone" is said when a train here would take it.
 */
function livenessFor(store: Store, self: ApiDeps['self']): { now: number; staleMs: number } {
  return { now: store.clock(), staleMs: DAEMON_STALE_LEASES * (self?.settings.leaseMs ?? DEFAULTS.leaseMs) };
}

/** The task detail's mergeCheck and mergeTurn, the project's check at work read once for both (none while a run of the task runs). */
export async function mergeCheckAndTurn(store: Store, self: ApiDeps['self'], task: Task, runs: readonly Run[]): Promise<Pick<TaskDetail, 'mergeCheck' | 'mergeTurn'>> {
  const idle = task.status === 'merging' && !runs.some((r) => r.status === 'running');
  const atWork = idle ? await withRiders(store, await mergeCheckAtWork(store.db, task.projectId, livenessFor(store, self))) : null;
  return { mergeCheck: await mergeCheckNow(store, task, runs, atWork), mergeTurn: mergeTurnNow(task, runs, atWork) };
}

/** `atWork`: the project's merge check at work, read by the caller while no run of the task runs (else null). */
async function mergeCheckNow(store: Store, task: Task, runs: readonly Run[], atWork: MergeCheckAtWork | null): Promise<TaskDetail['mergeCheck']> {
  if (task.status !== 'merging') return null;
  const run = runs.find((r) => r.kind === 'merge_check' && r.status === 'running');
  // No run yet: the train opened its check, and the check says why it has none (starting, waiting, its daemon gone).
  const opened = run || runs.some((r) => r.status === 'running') ? null : atWork;
  if (!run && (opened?.taskId !== task.id || opened.runId !== null)) return null;
  const [event] = (await store.events.list({ taskId: task.id, type: 'merge.check', order: 'newest', limit: 1 })).events;
  const count = (v: unknown) => (typeof v === 'number' ? v : null);
  const round = { round: count(event?.payload.round), maxRounds: count(event?.payload.maxRounds) };
  if (!run) return { runId: null, daemon: opened!.owner, check: null, ...round, state: opened!.state };
  const [phase] = (await store.events.list({ runId: run.id, type: 'run.phase', order: 'newest', limit: 1 })).events;
  const stage = typeof phase?.payload.stage === 'string' ? phase.payload.stage : '';
  return { runId: run.id, daemon: run.owner, check: stage.startsWith('check:') ? stage.slice('check:'.length) : null, ...round, state: 'running' };
}

/**
 * A task in merging with no run of its own, while another task of its project has its merge check at work (or opened,
 * with no run yet), waits for its turn: the merge queue runs one merge check at a time and lands nothing else of the project meanwhile (it stays in
 * merging, and looked stuck). Which task that is; it lands after it, or with it when it is checked together with it. `check` is the project's check at work, read by the
 * caller (the board's list reads it once per project).
 */
function mergeTurnNow(task: Task, runs: readonly Run[], check: CheckWithRiders | null | undefined): TaskDetail['mergeTurn'] {
  if (task.status !== 'merging' || runs.some((r) => r.status === 'running')) return null;
  if (!check || check.taskId === task.id) return null;
  // Checked together with it (daemon/mergeBatch.ts): the riders its train named.
  const together = check.riders.includes(task.id) ? { together: check.riders.length + 1 } : {};
  return { behind: { id: check.taskId, title: check.title }, ...together };
}

/** The project's merge check at work, with the tasks checked together with it (its riders). */
type CheckWithRiders = MergeCheckAtWork & { riders: string[] };

async function withRiders(store: Store, check: MergeCheckAtWork | null): Promise<CheckWithRiders | null> {
  if (!check) return null;
  return { ...check, riders: (await ridersOf(store, check.taskId)).map((r) => r.taskId) };
}

/**
 * For the board's cards: the merge check at work on each task in merging among `tasks`, by task id (its round), and
 * the turn each other one waits for. Two reads per such task (its running runs, its newest merge.check event), and
 * one per project of theirs; none for a page with no task in merging.
 */
export async function mergeChecksOf(store: Store, self: ApiDeps['self'], tasks: readonly Task[]): Promise<{ checks: Map<string, CardMergeCheck>; turns: Map<string, CardMergeTurn> }> {
  const checks = new Map<string, CardMergeCheck>();
  const turns = new Map<string, CardMergeTurn>();
  const atWork = new Map<string, CheckWithRiders | null>();
  for (const task of tasks.filter((t) => t.status === 'merging')) {
    const runs = await store.runs.list({ taskId: task.id, status: 'running' });
    if (runs.length === 0 && !atWork.has(task.projectId)) atWork.set(task.projectId, await withRiders(store, await mergeCheckAtWork(store.db, task.projectId, livenessFor(store, self))));
    const now = await mergeCheckNow(store, task, runs, atWork.get(task.projectId) ?? null);
    if (now) checks.set(task.id, { round: now.round, maxRounds: now.maxRounds, state: now.state });
    if (runs.length > 0) continue;
    const turn = mergeTurnNow(task, runs, atWork.get(task.projectId));
    if (turn) turns.set(task.id, turn);
  }
  return { checks, turns };
}
