/** A task in flight that another daemon on the database holds, as `task show` and `task logs --follow` say it. */
import type { TaskDetail } from '../../api/wire/responses.js';
import { TAKEN_OVER_AT_STAGE, type TaskStatus } from '../../core/status.js';
import { oneLine } from '../../lib/visible.js';

type Claim = NonNullable<TaskDetail['claimedElsewhere']>;

/**
 * Whether the daemon holding it has stopped (its name is off the database) or gone quiet: more of its lease has
 * passed since it was last heard from than is left, while a running daemon renews a quarter of a lease apart.
 */
export function claimQuiet(c: Claim): boolean {
  return c.lastHeardMsAgo === null || (c.leaseEndsInMs !== null && c.lastHeardMsAgo > c.leaseEndsInMs);
}

/**
 * Which other daemon holds a task in flight, and, when it has stopped or gone quiet, when another takes the task over
 * and how: where it stands when its finished stage's work is on the shared remote (at review), else back to ready.
 */
export function claimLine(claim: Claim, status?: TaskStatus): string {
  // The name another daemon registered with (--name, any text): on one line, so none of it reads as a line of ours.
  const c = { ...claim, daemon: oneLine(claim.daemon) };
  const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
  const quiet = claimQuiet(c);
  const who = c.lastHeardMsAgo === null ? `daemon ${c.daemon}, which has stopped` : `daemon ${c.daemon} (last heard from ${secs(c.lastHeardMsAgo)} ago${quiet ? ': stopped, or cut off from the database' : ''})`;
  if (!quiet) return `It runs on ${who}.`;
  const end = c.leaseEndsInMs === null ? ' Once its lease ends,' : c.leaseEndsInMs > 0 ? ` Its lease on the task ends in ${secs(c.leaseEndsInMs)}; then` : ' Its lease on the task has ended:';
  const restart = `(a restart of ${c.daemon} before then resumes the run)`;
  if (status && TAKEN_OVER_AT_STAGE.includes(status)) {
    return `It runs on ${who}.${end} a running daemon takes it over where it stands and reviews the commit ${c.daemon} pushed, or sends it back to ready to be executed again if that commit is not on the shared remote ${restart}.`;
  }
  return `It runs on ${who}.${end} a running daemon takes it back to ready and runs it again, from the branch ${c.daemon} last pushed ${restart}.`;
}
