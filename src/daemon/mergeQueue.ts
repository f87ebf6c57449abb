/**
 * The merge queue: with `mergeStrategy` `merge` or `no-ff`, an approved change whose branch does not hold the base
 * as the train finds it (a merge that is no fast-forward) lands only once the project's checks passed on the merged
 * tree. The train leaves such a car out (mergeTrain.ts `check`), and a merge check run (executor/pipelines/
 * mergeCheck.ts) merges the base into the task's branch in its worktree and runs the checks there; passed, the task
 * stays merging on its approval with the checked commit the one that may land (core/reviewed.ts mergeChecked), and
 * the next train fast-forwards to it (or, `no-ff`, makes a merge commit of its very tree). A base that moved again
 * meanwhile is checked again, up to MAX_CHECK_ROUNDS times; then a person is asked. A check that fails lands
 * nothing and sends the task to needs_attention, naming the check and what the base brought in.
 *
 * One change is checked at a time, in the order of approval: while a project's merge check runs (or waits for a slot,
 * here or on another daemon that owes it: store/ops/daemons.ts conflictHeldElsewhere),
 * nothing else of it lands, and the train stops at the first car it leaves out for one. Else every car approved
 * together would be checked on the same main, the first to pass would land and move it, and each of the others would
 * be checked again, the fourth of them past MAX_CHECK_ROUNDS: a person asked though nothing else moved main. A car
 * whose check passed goes first in its train, on the main it was checked with. The cars due behind the first one
 * left out are checked together with it, up to MAX_BATCH, in one run (mergeBatch.ts): one check for several changes.
 *
 * No checks configured, `ff-only` (a conflict run brings main in, and runs the checks), or a fast-forward: nothing
 * changes, no run, no cost.
 */
import { mergeChecked, nextCheck } from '../core/reviewed.js';
import type { Task } from '../core/types.js';
import { isAncestor } from '../git/merge.js';
import type { Car, CarOutcome } from './mergeTrain.js';

/** Merge checks one approval may pass while the base keeps moving under it, before a person is asked. */
export const MAX_CHECK_ROUNDS = 3;
/**
 * Checks of a batch on the same main that did not land (a change in it retried, cancelled or moved meanwhile) before a
 * person is asked: no round (core/reviewed.ts nextCheck), but not endless either.
 */
export const MAX_SAME_BASE_CHECKS = 3;

/** The train's mustCheck for a project: whether a car's merge onto `head` must be checked before it lands. */
export function mustCheckFor(repo: string, strategy: 'ff-only' | 'merge' | 'no-ff', checks: number): ((car: Car, head: string) => Promise<boolean>) | undefined {
  if (strategy === 'ff-only' || checks === 0) return undefined;
  return async (car, head) => !(await isAncestor(repo, head, car.tip));
}

/**
 * The order a project's due tasks go in (oldest approval first): none while one of its merge checks is at work or
 * waits for a slot (`checking`), and a task whose merge check passed before the rest; one whose check of several
 * changes passed (mergeBatch.ts) first of all. A rider of that chain holding an older check of its own alone (main
 * moved since) went first otherwise, as older, and had to be checked again: one more check, the chain thrown away.
 */
export function inQueueOrder(due: Task[], checking: boolean): Task[] {
  if (checking) return [];
  const rank = (t: Task) => {
    const checked = mergeChecked(t);
    return checked?.batch ? 0 : checked ? 1 : 2;
  };
  return [0, 1, 2].flatMap((r) => due.filter((t) => rank(t) === r));
}

/**
 * The `merge.check` event of a car left out for its merge check, said under the lease and naming this daemon: another
 * daemon's train that takes the lease before the run starts leaves the task alone (store/ops/daemons.ts conflictHeldElsewhere).
 * It names the riders checked together with the car (mergeBatch.ts): the check run's job reads them from it (ridersOf).
 */
export function checkEvent(o: Extract<CarOutcome, { kind: 'check' }>, owner: string) {
  const { round } = nextCheck(o.car.task, o.head);
  return { projectId: o.car.task.projectId, taskId: o.car.task.id, type: 'merge.check', payload: { branch: o.car.branch, tip: o.car.tip, base: o.head, round, maxRounds: MAX_CHECK_ROUNDS, owner, riders: o.riders } };
}

/** Why a merge is not checked again: each of its last checks passed on this main, and a change checked with it changed. */
export function recheckedTooOften(task: Task, base: string, checks: number): string {
  return `the merge of this change onto ${base} passed its checks ${checks} times, each time together with other changes of which one was then retried, cancelled or moved, so nothing was merged (only a checked merge lands); run \`maestro task retry ${task.id}\` to check it again, or \`maestro task cancel ${task.id}\``;
}

/** Why a merge is not checked again: the base moved under each of its checks. */
export function movedTooOften(task: Task, base: string, rounds: number): string {
  return `${base} moved again during each of the ${rounds} merge checks of this change, so nothing was merged (only a checked merge lands); run \`maestro task retry ${task.id}\` to check it again once ${base} is quieter, or \`maestro task cancel ${task.id}\``;
}
