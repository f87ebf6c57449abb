/**
 * What the task store says of the tasks behind knowledge sessions, asked of the daemon (GET /api/tasks/standing).
 * `maestro knowledge review` and `maestro session list` read the session folders on this host themselves; which
 * version of a task a session holds, whether a person replaced it and whether the task is finished is the store's
 * to say (core/supersededVersion.ts), and any daemon on that store answers alike: a rejection made on another
 * host is known here. With no daemon to ask, the command still answers from the folders and says what it could
 * not know.
 */
import { taskIdOfSession, sessionIdFor } from '../../core/supersededVersion.js';
import type { TaskStanding } from '../../api/wire/knowledgeReview.js';
import type { Env } from '../../config/env.js';
import { clientFor } from './common.js';

export type Standing = TaskStanding['tasks'][number];

/** Ids in one request: a URL of about 4 kB (the route takes up to 500). */
const IDS_PER_ASK = 200;

/** By session id, the standing of each task session among `sids`; `unasked`: why the daemon did not answer, or null. */
export async function taskStanding(sids: readonly string[], env: Env): Promise<{ bySession: Map<string, Standing>; unasked: string | null }> {
  const ids = [...new Set(sids.flatMap((s) => taskIdOfSession(s) ?? []))];
  const bySession = new Map<string, Standing>();
  if (!ids.length) return { bySession, unasked: null };
  try {
    const client = clientFor({}, env);
    for (let i = 0; i < ids.length; i += IDS_PER_ASK) {
      const { tasks } = await client.get<TaskStanding>(`/api/tasks/standing?ids=${ids.slice(i, i + IDS_PER_ASK).join(',')}`);
      for (const t of tasks) bySession.set(sessionIdFor(t.id), t);
    }
    return { bySession, unasked: null };
  } catch (err) {
    return { bySession: new Map(), unasked: (err as Error).message };
  }
}
