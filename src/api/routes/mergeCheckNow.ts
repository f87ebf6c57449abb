/**
 * A task in `merging` whose merge check run is at work (daemon/mergeQueue.ts) looks stuck on the board: nothing says
 * main is being merged into its branch and the project's checks run on that. This reads what the run is doing from its
 * newest phase (the merge, or `check:<name>`) and the round from the `merge.check` event that opened it; a check the
 * train opened whose run waits for a worker slot (every run slot taken) says that, else the task looked stuck as well.
 * The tasks of the project waiting behind that check (mergeTurnNow) say whose check it is and that they land after it.
 */
import type { CardMergeCheck, CardMergeTurn } from '../../core/taskSummary.js';
import type { Run, Task } from '../../core/types.js';
import { mergeCheckAtWork, type MergeCheckAtWork } from '../../store/ops/mergeCheckAtWork.js';
import type { Store } from '../../store/store.js';
import { ridersOf } from '../../daemon/mergeBatch.js';
import type { TaskDetail } from '../wire/responses.js';

/** The task detail's mergeCheck and mergeTurn, the project's check at work read once for both (none while a run of the task runs). */
export async function mergeCheckAndTurn(store: Store, task: Task, runs: readonly Run[]): Promise<Pick<TaskDetail, 'mergeCheck' | 'mergeTurn'>> {
  const idle = task.status === 'merging' && !runs.some((r) => r.status === 'running');
  const atWork = idle ? await withRiders(store, await mergeCheckAtWork(store.db, task.projectId)) : null;
  return { mergeCheck: await mergeCheckNow(store, task, runs, atWork), mergeTurn: mergeTurnNow(task, runs, atWork) };
}

/** `atWork`: the project's merge check at work, read by the caller while no run of the task runs (else null). */
async function mergeCheckNow(store: Store, task: Task, runs: readonly Run[], atWork: MergeCheckAtWork | null): Promise<TaskDetail['mergeCheck']> {
  if (task.status !== 'merging') return null;
  const run = runs.find((r) => r.kind === 'merge_check' && r.status === 'running');
  // No run yet: its check may wait for a run slot (the train opened it, every slot is taken), and says so.
  const waiting = run || runs.some((r) => r.status === 'running') ? null : atWork;
  if (!run && (waiting?.taskId !== task.id || waiting.runId !== null)) return null;
  const [opened] = (await store.events.list({ taskId: task.id, type: 'merge.check', order: 'newest', limit: 1 })).events;
  const count = (v: unknown) => (typeof v === 'number' ? v : null);
  const round = { round: count(opened?.payload.round), maxRounds: count(opened?.payload.maxRounds) };
  if (!run) return { runId: null, daemon: waiting!.waitingOn, check: null, ...round, waiting: true };
  const [phase] = (await store.events.list({ runId: run.id, type: 'run.phase', order: 'newest', limit: 1 })).events;
  const stage = typeof phase?.payload.stage === 'string' ? phase.payload.stage : '';
  return { runId: run.id, daemon: run.owner, check: stage.startsWith('check:') ? stage.slice('check:'.length) : null, ...round, waiting: false };
}

/**
 * A task in merging with no run of its own, while another task of its project has its merge check at work (or waiting
 * for a run slot), waits for its turn: the merge queue runs one merge check at a time and lands nothing else of the project meanwhile (it stays in
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
export async function mergeChecksOf(store: Store, tasks: readonly Task[]): Promise<{ checks: Map<string, CardMergeCheck>; turns: Map<string, CardMergeTurn> }> {
  const checks = new Map<string, CardMergeCheck>();
  const turns = new Map<string, CardMergeTurn>();
  const atWork = new Map<string, CheckWithRiders | null>();
  for (const task of tasks.filter((t) => t.status === 'merging')) {
    const runs = await store.runs.list({ taskId: task.id, status: 'running' });
    if (runs.length === 0 && !atWork.has(task.projectId)) atWork.set(task.projectId, await withRiders(store, await mergeCheckAtWork(store.db, task.projectId)));
    const now = await mergeCheckNow(store, task, runs, atWork.get(task.projectId) ?? null);
    if (now) checks.set(task.id, { round: now.round, maxRounds: now.maxRounds, waiting: now.waiting });
    if (runs.length > 0) continue;
    const turn = mergeTurnNow(task, runs, atWork.get(task.projectId));
    if (turn) turns.set(task.id, turn);
  }
  return { checks, turns };
}
