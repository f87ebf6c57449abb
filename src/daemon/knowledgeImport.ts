/**
 * The knowledge a task's runs on another daemon proposed, brought here at its gate. A run's candidates are staged
 * in its session folder in the clone of the daemon that ran it (not pushed: a host's own record); its daemon also
 * stores the sealed ledger in the database when the run finishes (runAftermath.ts knowledgeFinished,
 * store/ops/runKnowledge.ts). A task taken over at review reaches exec_review on another daemon: that daemon
 * imports each such run's ledger into its own session (knowledge/lifecycle/session/importRun.ts), so its review,
 * promotion and audit see the candidates as its own runs'. Once: a run already in the session is left as it is.
 *
 * What is left is what cannot come: a run that finished before ledgers were stored (no row), or one whose stored
 * ledger does not read (the refusal names the run; nothing of it is imported). Those the task detail names
 * (api/routes/knowledgeElsewhere.ts), with where they are.
 */
import { coerceError } from '../core/errors.js';
import { taskIdOfSession } from '../core/supersededVersion.js';
import type { Run, Task } from '../core/types.js';
import type { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import type { Store } from '../store/store.js';
import { workRepoOf } from './repos.js';

/** Run kinds whose agent writes a report whose decisions and constraints become candidates (reviews only read). */
export const PROPOSING: readonly Run['kind'][] = ['plan', 'execute', 'conflict'];

/** A run of another daemon whose candidates are not here: `error` says why its stored ledger was refused; null, none was stored. */
export interface NotImported {
  run: Run;
  error: string | null;
}

/** The finished proposing runs of the task that ran on another daemon than `self`. */
export function othersProposing(self: string, runs: readonly Run[]): Run[] {
  return runs.filter((r) => r.owner !== null && r.owner !== self && r.status === 'succeeded' && PROPOSING.includes(r.kind));
}

/**
 * Imports into this daemon's session of the task (its clone for a project on a shared remote) the stored ledger of
 * each run of another daemon not there yet; returns the runs whose candidates are still not here.
 */
export async function importKnowledgeElsewhere(store: Store, knowledge: KnowledgeBridge, home: string, self: string, task: Task, runs: readonly Run[]): Promise<NotImported[]> {
  const theirs = othersProposing(self, runs);
  if (!theirs.length) return [];
  const repoPath = workRepoOf(home, await store.projects.get(task.projectId));
  const left: NotImported[] = [];
  // A stat per run first: each look at the gate read every run's whole stored ledger (up to 4 MB) before the
  // import found its folder already here. Only the runs not here yet are asked of the database.
  const missing: Run[] = [];
  for (const run of theirs) {
    try {
      if (!(await knowledge.runHere({ task, run: { id: run.id, kind: run.kind }, repoPath }))) missing.push(run);
    } catch (err) {
      left.push({ run, error: coerceError(err).message });
    }
  }
  if (!missing.length) return left;
  const stored = await store.runs.knowledgeOf(missing.map((r) => r.id));
  for (const run of missing) {
    if (!stored.has(run.id)) {
      left.push({ run, error: null });
      continue;
    }
    const ledger = stored.get(run.id);
    if (ledger === null || ledger === undefined) continue; // it staged nothing
    try {
      await knowledge.importRun({ task, run: { id: run.id, kind: run.kind }, repoPath, ledger });
    } catch (err) {
      left.push({ run, error: coerceError(err).message });
    }
  }
  return left;
}

/**
 * Before a task session's review is read (GET /api/knowledge/review/:session): a task of the project at its gate
 * first imports what its runs on other daemons proposed; any other session is read as it is.
 */
export async function importAtGate(store: Store, knowledge: KnowledgeBridge, daemon: { home: string; self: string }, projectId: string, sid: string): Promise<void> {
  const taskId = taskIdOfSession(sid);
  const task = taskId ? await store.tasks.row(taskId).catch(() => null) : null;
  if (!task || task.projectId !== projectId || task.status !== 'exec_review') return;
  await importKnowledgeElsewhere(store, knowledge, daemon.home, daemon.self, task, await store.runs.list({ taskId: task.id }));
}
