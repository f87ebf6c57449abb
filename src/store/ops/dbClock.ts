/**
 * The clock of leases (a task's claim, a project's merge lease), of a failed task's backoff (`next_eligible_at`)
 * and of the daemons registry's heartbeats.
 *
 * On PostgreSQL the daemons run on several hosts whose clocks may disagree by minutes. A lease stamped by one
 * host's clock and compared by another's ended minutes early for a host running ahead (it took live daemons'
 * tasks over: a model paid twice, work thrown away) and minutes late for one running behind (a dead daemon's
 * task held on); a backoff stamped by one host ended minutes early for a host ahead (it claimed the task again
 * at once). So there every lease and backoff is stamped and compared by the database's clock, `now()`, in the same
 * statement; `param` (the caller's clock) only types the placeholder. SQLite is one machine: the caller's
 * injected clock. A handle with `handClock` (a test suite that moves time by hand) keeps the caller's clock on
 * PostgreSQL too.
 */
import type { Queryable } from '../db.js';

/** The SQL for "now" in epoch milliseconds, by the clock described above; `param` is the caller's clock (`$n`). */
export function dbNow(q: Pick<Queryable, 'dialect' | 'handClock'>, param: string): string {
  if (q.dialect !== 'postgres') return param;
  return q.handClock ? `${param}::bigint` : `COALESCE((extract(epoch from now()) * 1000)::bigint, ${param}::bigint)`;
}
