/**
 * `task show` of a task in merging whose merge check is at work, or waits for a worker (the task detail's `mergeCheck`,
 * api/routes/mergeCheckNow.ts): what it is doing, as the board's task detail says it, so the task does not look stuck
 * from the terminal either.
 */
import type { TaskDetail } from '../../api/wire/responses.js';
import { oneLine } from '../../lib/visible.js';

export function mergeCheckLine(check: NonNullable<TaskDetail['mergeCheck']>, baseBranch: string): string {
  const base = oneLine(baseBranch);
  if (check.waiting) {
    const on = check.daemon !== null ? ` on daemon ${oneLine(check.daemon)}` : '';
    const round = check.round !== null && check.maxRounds !== null ? ` It will be merge check ${check.round} of at most ${check.maxRounds}.` : '';
    return `Merge check waiting for a worker: its merge with ${base} must pass the project's checks before it lands, and every run slot${on} is taken (maxConcurrentRuns). The check starts when one of those runs ends; nothing lands until it passes.${round}`;
  }
  const doing = check.check === null
    ? `Checking the merge with ${base}: ${base} is being merged into its branch, then the project's checks run on it. Nothing lands until they pass.`
    : `Checking the merge with ${base}: check ${oneLine(check.check)} runs on its branch merged with ${base}. Nothing lands until the checks pass.`;
  const round = check.round !== null && check.maxRounds !== null && check.daemon !== null ? ` Merge check ${check.round} of at most ${check.maxRounds}, on daemon ${oneLine(check.daemon)}.` : '';
  return doing + round;
}

/** `task show` of a task in merging waiting behind another task's merge check (the task detail's `mergeTurn`). */
export function mergeTurnLine(turn: NonNullable<TaskDetail['mergeTurn']>): string {
  if (turn.together) return `Checking the merge together with ${oneLine(turn.behind.title)} (${oneLine(turn.behind.id)}): ${turn.together} changes, checked in one merge check. They land together once the checks pass.`;
  return `Waiting for its turn to merge: the merge check of ${oneLine(turn.behind.title)} (${oneLine(turn.behind.id)}) comes first, and the merge queue runs one merge check at a time. This task lands after it.`;
}
