/**
 * The knowledge a task's runs on another daemon proposed, at its gate: a run's candidates are staged in its session
 * folder in that daemon's clone, and come here with the ledger that daemon stored in the database
 * (daemon/knowledgeImport.ts), imported when the task is at exec_review. What could not come is said, with where
 * it is, rather than a gate that names no candidates as if the run proposed none: a run that finished before
 * ledgers were stored, or one whose stored ledger does not read (with why). A run that proposed nothing, or whose
 * candidates are here, is not named.
 */
import type { Run, Task } from '../../core/types.js';
import { importKnowledgeElsewhere } from '../../daemon/knowledgeImport.js';
import type { KnowledgeBridge } from '../../knowledge/lifecycle/bridge.js';
import type { Store } from '../../store/store.js';
import type { TaskDetail } from '../wire/responses.js';

/** `knowledge`: the daemon's bridge and home (a server without one imports nothing and says nothing). */
export async function knowledgeElsewhere(store: Store, self: string | undefined, knowledge: { bridge: KnowledgeBridge; home: string } | undefined, task: Task, runs: readonly Run[]): Promise<TaskDetail['knowledgeElsewhere']> {
  if (self === undefined || knowledge === undefined || task.status !== 'exec_review') return [];
  const left = await importKnowledgeElsewhere(store, knowledge.bridge, knowledge.home, self, task, runs);
  if (!left.length) return [];
  const registered = await store.daemons.named(left.map((l) => l.run.owner!));
  return left.map(({ run: r, error }) => ({ daemon: r.owner!, runId: r.id, kind: r.kind, host: registered.get(r.owner!)?.host ?? null, home: registered.get(r.owner!)?.home ?? null, error }));
}
