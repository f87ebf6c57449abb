/**
 * claimBest on PostgreSQL in ONE statement: lock the best free rows of the
 * slice (SKIP LOCKED), keep those within the per-project limits, claim them,
 * and insert their decisions and `ready → queued` events, all through
 * data-modifying CTEs. The four round trips of the general form (select,
 * update, two inserts) cost more than the claims themselves on a busy machine;
 * the semantics are the same (ops/claimBest.ts). The store runs it with no
 * BEGIN or COMMIT (one statement is its own transaction) as a prepared
 * statement: planning these CTEs cost more server time than running them.
 */
import type { Queryable } from '../db.js';
import { toEvent, type Row } from '../rows.js';
import type { ClaimBestOptions, Claimed } from './claimBest.js';
import type { ClaimDecision } from './claim.js';
import { dbNow } from './dbClock.js';

/** The statement, with the lease and the backoff by the database's clock (ops/dbClock.ts), or by `$1` for a suite that moves time by hand. */
const sql = (leaseNow: string) => `
WITH slice AS (
  SELECT s.id, s.pos FROM json_array_elements_text($2::json) WITH ORDINALITY AS s(id, pos)
), free AS (
  SELECT t.id, t.project_id, slice.pos FROM tasks t JOIN slice ON slice.id = t.id
  WHERE t.status = 'ready' AND t.claimed_at IS NULL AND (t.next_eligible_at IS NULL OR t.next_eligible_at <= ${leaseNow})
  ORDER BY slice.pos LIMIT $3 FOR UPDATE OF t SKIP LOCKED
), capped AS (
  SELECT id, pos FROM (SELECT free.*, ROW_NUMBER() OVER (PARTITION BY project_id ORDER BY pos) AS n FROM free) f
  WHERE n <= COALESCE((($6::json) ->> project_id)::int, $3)
), claimed AS (
  UPDATE tasks t SET status = 'queued', claimed_at = $1, claimed_by = $4, attempt = t.attempt + 1, lease_expires_at = ${leaseNow} + $5, updated_at = $1
  FROM capped WHERE t.id = capped.id
  RETURNING t.id, t.attempt, t.project_id, capped.pos
), decided AS (
  INSERT INTO scheduler_decisions (project_id, task_id, owner, score, breakdown, competitors, at)
  SELECT c.project_id, c.id, $4, (d.value ->> 'score')::float8, (d.value -> 'breakdown')::text, (d.value -> 'competitors')::text, $1
  FROM claimed c JOIN json_each($7::json) d ON d.key = c.id
), ev AS (
  INSERT INTO events (project_id, task_id, type, payload, at)
  SELECT c.project_id, c.id, 'task.status',
    (jsonb_build_object('from', 'ready', 'to', 'queued', 'owner', $4::text, 'attempt', c.attempt)
      || CASE WHEN d.value IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('score', (d.value ->> 'score')::float8) END)::text,
    $1
  FROM claimed c LEFT JOIN json_each($7::json) d ON d.key = c.id
  ORDER BY c.pos
  RETURNING *
)
SELECT * FROM ev ORDER BY id`;
const BY_DATABASE = sql(dbNow({ dialect: 'postgres' }, '$1'));
const BY_HAND = sql(dbNow({ dialect: 'postgres', handClock: true }, '$1'));

export async function claimBestPg(q: Queryable, o: ClaimBestOptions): Promise<Claimed[]> {
  if (o.max <= 0 || !o.ranked.length) return [];
  // Room per project and the decisions, for every candidate: which ones win is known only inside the statement.
  const caps: Record<string, number> = {};
  const decisions: Record<string, ClaimDecision> = {};
  for (const c of o.ranked) {
    if (o.perProject && !(c.projectId in caps)) caps[c.projectId] = Math.max(0, o.perProject(c.projectId));
    const d = o.decisionFor?.(c.id);
    if (d) decisions[c.id] = d;
  }
  const params = [o.now, JSON.stringify(o.ranked.map((c) => c.id)), o.max, o.owner, o.leaseMs, JSON.stringify(caps), JSON.stringify(decisions)];
  const rows = await q.all<Row>(q.handClock ? BY_HAND : BY_DATABASE, params, { prepare: q.handClock ? 'maestro_claim_best_by_hand' : 'maestro_claim_best' });
  return rows.map((r) => {
    const e = toEvent(r);
    q.onEvent?.(e);
    return { id: e.taskId!, projectId: e.projectId!, attempt: Number(e.payload.attempt) };
  });
}
