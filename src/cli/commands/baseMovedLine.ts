/**
 * `task show` at exec_review: how far the project's base branch moved since the task's branch was cut (the task
 * detail's `baseMoved`, api/routes/baseMoved.ts), and what an approval does then, as the board's gate says it. A
 * person approving from the terminal should not learn only from the board what lands, and whether the checks see it
 * first (the merge queue, daemon/mergeQueue.ts).
 */
import type { BaseMoved } from '../../api/wire/responses.js';
import { oneLine } from '../../lib/visible.js';

export function baseMovedLine(moved: BaseMoved): string {
  const base = oneLine(moved.base);
  const branch = oneLine(moved.branch);
  if (moved.state === 'missing') {
    if (moved.missing === 'both') return `Neither the task's branch ${branch} nor the base branch ${base} is in the repository: how far ${base} moved cannot be counted.`;
    return moved.missing === 'branch'
      ? `The task's branch ${branch} is not in the repository: the commits ${base} gained since it was cut cannot be counted.`
      : `The base branch ${base} is not in the repository: the commits it gained since ${branch} was cut cannot be counted.`;
  }
  if (moved.commits === 0) return `The base branch ${base} has no new commit since this branch was cut: up to date.`;
  const gained = `The base branch ${base} has ${moved.commits} new commit${moved.commits === 1 ? '' : 's'} since this branch was cut`;
  if (moved.mergeStrategy === 'ff-only') return `${gained}, and the project merges fast-forward only: an approval merges nothing now. A conflict run brings ${base} into the branch, runs the checks and the reviews, and the result comes back to this gate.`;
  if (moved.mergeStrategy === null) return `${gained}.`;
  const conflict = `if the two conflict, a conflict run brings ${base} in, runs the checks and the reviews, and the result comes back to this gate`;
  if (moved.checks === 0) return `${gained}: an approval merges the branch onto ${base} as it is now (the project has no checks to run on the result; ${conflict}).`;
  return `${gained}: after an approval the project's checks run on the branch merged with ${base} as it is now, and only that checked result lands; if they fail, nothing lands and the task needs attention (${conflict}).`;
}
