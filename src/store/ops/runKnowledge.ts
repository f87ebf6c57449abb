/**
 * A finished run's ledger kept in the database (migration 012), so that a daemon that took its task over can review
 * what it proposed (daemon/knowledgeImport.ts). Stored once: the ledger the run's daemon sealed stands; a second
 * store of the same run changes nothing. The text is kept as the daemon read it from its file: whoever imports it
 * validates it with the ledger's own schema (knowledge/lifecycle/session/importRun.ts), as a read of the file would.
 */
import type { Queryable } from '../db.js';

/** `ledger` null: the run staged nothing. Returns whether this call stored it (false: a ledger was stored before). */
export async function storeRunKnowledge(db: Queryable, o: { runId: string; ledger: string | null; now: number }): Promise<boolean> {
  const n = await db.run(`INSERT INTO run_knowledge (run_id, ledger, stored_at) VALUES ($1, $2, $3) ON CONFLICT (run_id) DO NOTHING`, [o.runId, o.ledger, o.now]);
  return n === 1;
}

/** The stored ledgers of these runs, by run id: a run with no row is absent; one that staged nothing maps to null. */
export async function runKnowledgeOf(db: Queryable, runIds: readonly string[]): Promise<Map<string, string | null>> {
  if (!runIds.length) return new Map();
  const rows = await db.all<{ run_id: string; ledger: string | null }>(`SELECT run_id, ledger FROM run_knowledge WHERE run_id IN (${runIds.map((_, i) => `$${i + 1}`).join(', ')})`, [...runIds]);
  return new Map(rows.map((r) => [String(r.run_id), r.ledger === null ? null : String(r.ledger)]));
}
