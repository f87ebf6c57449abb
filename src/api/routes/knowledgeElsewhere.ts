/**
 * The knowledge a task's runs on another daemon proposed stays where they ran: a run's candidates are staged in its
 * session folder in that daemon's clone (`.workflow/sessions/<session>/runs/<run>/`, under its MAESTRO_HOME), which
 * is this host's record and not on the shared remote. A task taken over at review (store/ops/claim.ts) reaches its
 * gate here with its execute's candidates on the daemon that stopped, and the knowledge review here does not see
 * them: said, with where they are, rather than a gate that names no candidates as if the run proposed none.
 */
import type { Run } from '../../core/types.js';
import type { Store } from '../../store/store.js';
import type { TaskDetail } from '../wire/responses.js';

/** Run kinds whose agent writes a report whose decisions and constraints become candidates (reviews only read). */
const PROPOSING: readonly Run['kind'][] = ['plan', 'execute', 'conflict'];

export async function knowledgeElsewhere(store: Store, self: string | undefined, runs: readonly Run[]): Promise<TaskDetail['knowledgeElsewhere']> {
  if (self === undefined) return [];
  const theirs = runs.filter((r) => r.owner !== null && r.owner !== self && r.status === 'succeeded' && PROPOSING.includes(r.kind));
  if (!theirs.length) return [];
  const registered = await store.daemons.named(theirs.map((r) => r.owner!));
  return theirs.map((r) => ({ daemon: r.owner!, runId: r.id, kind: r.kind, host: registered.get(r.owner!)?.host ?? null, home: registered.get(r.owner!)?.home ?? null }));
}
