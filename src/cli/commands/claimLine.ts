/** A task in flight that another daemon on the database holds, as `task show` and `task logs --follow` say it. */
import type { TaskDetail } from '../../api/wire/responses.js';

type Claim = NonNullable<TaskDetail['claimedElsewhere']>;

/**
 * Whether the daemon holding it has stopped (its name is off the database) or gone quiet: more of its lease has
 * passed since it was last heard from than is left, while a running daemon renews a quarter of a lease apart.
 */
export function claimQuiet(c: Claim): boolean {
  return c.lastHeardMsAgo === null || (c.leaseEndsInMs !== null && c.lastHeardMsAgo > c.leaseEndsInMs);
}

/** Which other daemon holds a task in flight, and, when it has stopped or gone quiet, when another takes the task over. */
export function claimLine(c: Claim): string {
  const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
  const quiet = claimQuiet(c);
  const who = c.lastHeardMsAgo === null ? `daemon ${c.daemon}, which has stopped` : `daemon ${c.daemon} (last heard from ${secs(c.lastHeardMsAgo)} ago${quiet ? ': stopped, or cut off from the database' : ''})`;
  if (!quiet) return `It runs on ${who}.`;
  const end = c.leaseEndsInMs === null ? ' Once its lease ends,' : c.leaseEndsInMs > 0 ? ` Its lease on the task ends in ${secs(c.leaseEndsInMs)}; then` : ' Its lease on the task has ended:';
  return `It runs on ${who}.${end} a running daemon takes it back to ready and runs it again, from the branch ${c.daemon} last pushed (a restart of ${c.daemon} before then resumes the run).`;
}
