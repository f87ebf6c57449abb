/**
 * `task show` of a task in merging whose merge check is at work, or was opened with no run yet (the task detail's
 * `mergeCheck`, api/routes/mergeCheckNow.ts): what it is doing, or why it has no run (being started, waiting for a
 * worker, its daemon gone), as the board's task detail says it, so the task does not look stuck from the terminal either.
 */
import type { TaskDetail } from '../../api/wire/responses.js';
import { oneLine } from '../../lib/visible.js';

export function mergeCheckLine(check: NonNullable<TaskDetail['mergeCheck']>, baseBranch: string): string {
  const base = oneLine(baseBranch);
  const daemon = check.daemon !== null ? oneLine(check.daemon) : null;
  const known = check.round !== null && check.maxRounds !== null;
  const willBe = known ? ` It will be merge check ${check.round} of at most ${check.maxRounds}.` : '';
  const mustPass = `its merge with ${base} must pass the project's checks before it lands`;
  switch (check.state) {
    case 'starting':
      return `Starting its merge check: ${mustPass}, and ${daemon !== null ? `daemon ${daemon} is starting` : 'a daemon is starting'} the check's run on a free run slot. Nothing lands until it passes.${willBe}`;
    case 'waiting':
      return `Merge check waiting for a worker: ${mustPass}, and every run slot${daemon !== null ? ` on daemon ${daemon}` : ''} is taken (maxConcurrentRuns). The check starts when one of those runs ends; nothing lands until it passes.${willBe}`;
    case 'ownerGone':
      return `Merge check left behind: ${mustPass}, and ${daemon !== null ? `daemon ${daemon}, which opened it,` : 'the daemon that opened it'} is no longer running (stopped, or no heartbeat), so its run will not start there. Another daemon takes the check over at its next merge pass; nothing lands until it passes.${willBe}`;
    case 'running': {
      const doing = check.check === null
        ? `Checking the merge with ${base}: ${base} is being merged into its branch, then the project's checks run on it. Nothing lands until they pass.`
        : `Checking the merge with ${base}: check ${oneLine(check.check)} runs on its branch merged with ${base}. Nothing lands until the checks pass.`;
      return doing + (known && daemon !== null ? ` Merge check ${check.round} of at most ${check.maxRounds}, on daemon ${daemon}.` : '');
    }
    default: {
      // A state a newer daemon says: its name, rather than nothing.
      const never: never = check.state;
      return `Merge check (${oneLine(String(never))}): ${mustPass}.`;
    }
  }
}

/** `task show` of a task in merging waiting behind another task's merge check (the task detail's `mergeTurn`). */
export function mergeTurnLine(turn: NonNullable<TaskDetail['mergeTurn']>): string {
  if (turn.together) return `Checking the merge together with ${oneLine(turn.behind.title)} (${oneLine(turn.behind.id)}): ${turn.together} changes, checked in one merge check. They land together once the checks pass.`;
  return `Waiting for its turn to merge: the merge check of ${oneLine(turn.behind.title)} (${oneLine(turn.behind.id)}) comes first, and the merge queue runs one merge check at a time. This task lands after it.`;
}
