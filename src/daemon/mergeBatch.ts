/**
 * The merge queue's batches, bors-style (mergeQueue.ts): when the train finds its first car that must be checked (the
 * leader) and further approved cars behind it, up to MAX_BATCH of them are checked together in one merge check run of
 * the leader (executor/pipelines/mergeChain.ts): the chain the train would build — each car merged in turn onto the
 * base, a merge commit each — with the checks run once on its tip. N changes approved together cost one check, not N.
 *
 * Passed, the next train lands the chain as it is: main fast-forwards to its tip (one push on a shared remote; the
 * chain reaches it on the leader's branch, which the check run publishes), and each task is recorded merged with its
 * own merge commit in the chain. Exactly once, and never unchecked: the chain lands only on the main it was built on,
 * with every rider still approved on the commit it merged and its branch still there; else the check no longer counts
 * for any of them, and the leader is checked again (with the riders still due). Failed with more than one change, nobody
 * is asked: each of them is checked alone from then on (core/reviewed.ts mergeAlone), so the change that breaks the
 * checks is found by its own check and only it goes to needs_attention.
 *
 * Why 4: a batch that fails costs its cars one check each on top, so a bigger batch saves more when the checks pass
 * (N - 1 checks) and wastes more when they do not; 4 cuts a queue of approved changes to a quarter of the checks and
 * bounds a failure's extra cost at 4 runs. (MAX_TRAIN, 25, would make one broken change cost 25 runs after it.)
 */
import { mergeAlone, mergeChecked, reviewedCommit } from '../core/reviewed.js';
import type { Task } from '../core/types.js';
import type { Store } from '../store/store.js';

/** What a batch needs of a train's car (mergeTrain.ts Car, which imports this module). */
interface Car {
  task: Task;
  branch: string;
  tip: string;
}

/** Changes checked together at most: the leader and up to 3 riders. */
export const MAX_BATCH = 4;

/** A change checked together with the leader's: what the check run merges for it (the job's mergeBatch). */
export interface Rider {
  taskId: string;
  title: string;
  branch: string;
  commit: string;
}

/**
 * The cars behind `leader` (in queue order) checked together with it: none for a leader or car checked alone now, nor
 * one holding a passed chain of its own: chainFor counts a chain with such a rider stale, so it would be checked
 * again and again on the same main (the leader of that chain goes first in its turn: mergeQueue.ts inQueueOrder).
 */
export function ridersFor(leader: Car, behind: readonly Car[]): Rider[] {
  if (mergeAlone(leader.task)) return [];
  return behind
    .filter((c) => !mergeAlone(c.task) && !mergeChecked(c.task)?.batch)
    .slice(0, MAX_BATCH - 1)
    .map((c) => ({ taskId: c.task.id, title: c.task.title, branch: c.branch, commit: c.tip }));
}

/** A passed check of several changes that may land now: each car of this train with its merge commit, in chain order. */
export type ChainToLand<C extends Car> = Array<{ car: C; sha: string }>;

/**
 * What the leader's passed check of several changes lets land on `head`: the chain (the leader and its riders, among
 * `cars`), 'stale' when it no longer counts (main moved, a rider is not due in this train or was approved anew, its
 * branch moved), or null when the leader's check was of its change alone.
 */
export function chainFor<C extends Car>(leader: C, cars: readonly C[], head: string): ChainToLand<C> | 'stale' | null {
  const checked = mergeChecked(leader.task);
  const batch = checked?.batch;
  if (!checked || !batch) return null;
  if (batch.base !== head || leader.tip !== checked.commitSha || batch.cars[0]?.taskId !== leader.task.id) return 'stale';
  const chain: ChainToLand<C> = [{ car: leader, sha: batch.cars[0].sha }];
  for (const entry of batch.cars.slice(1)) {
    const car = cars.find((c) => c.task.id === entry.taskId);
    if (!car || car.tip !== entry.commit || reviewedCommit(car.task) !== entry.commit || mergeChecked(car.task)?.batch) return 'stale';
    chain.push({ car, sha: entry.sha });
  }
  return chain;
}

/** The riders the train named for the task's merge check (its newest merge.check event), for the check run's job. */
export async function ridersOf(store: Store, taskId: string): Promise<Rider[]> {
  const [opened] = (await store.events.list({ taskId, type: 'merge.check', order: 'newest', limit: 1 })).events;
  const riders = opened?.payload.riders;
  if (!Array.isArray(riders)) return [];
  return riders.filter((r): r is Rider => !!r && typeof r === 'object' && ['taskId', 'title', 'branch', 'commit'].every((k) => typeof (r as Record<string, unknown>)[k] === 'string'));
}
