/**
 * The search half of a run's brief (bridge.ts): the project's active specs
 * and knowhow that best match the task, as a read-only probe (the brief
 * changes no exposure count), with the documented minimum match, so an
 * unrelated task cites nothing.
 *
 * Two ways to reach the index: the daemon searches its KnowledgeService's
 * warm handle for the project (service.ts `briefSearch`: one handle per
 * project for the daemon's life, shared with the knowledge routes, its files
 * re-checked first); a process without a service opens, searches and closes
 * its own (`searchIndexFor`).
 */
import { openKnowledge, type Knowledge } from '../knowledge.js';
import type { WorkflowRoot } from '../format/root.js';

export interface BriefHit {
  id: string;
  sid: string | null;
  title: string;
  body: string;
}

/** How the bridge searches for a brief: the workflow root, the task's text, at most this many hits. */
export type BriefSearch = (root: WorkflowRoot, text: string, limit: number) => BriefHit[];

/** The brief's hits from an open handle (the caller decides how fresh its index is). */
export function briefHits(k: Knowledge, text: string, limit: number): BriefHit[] {
  return k
    .search(text, { limit: limit * 2, readOnlyProbe: true })
    .results.filter((r) => r.kind === 'spec' || r.kind === 'knowhow')
    .slice(0, limit)
    .map((r) => ({ id: r.id, sid: r.aliases.find((a) => /^S-\d{8}-/.test(a)) ?? null, title: r.name, body: r.snippet }));
}

/** One-shot: a handle of its own, scanned, searched and closed (a process without a KnowledgeService). */
export function searchIndexFor(root: WorkflowRoot, text: string, limit: number, env: NodeJS.ProcessEnv): BriefHit[] {
  const k = openKnowledge({ workflowRoot: root.projectDir, includeGlobal: root.includeGlobal, embedder: null, env: { ...env, MAESTRO_HOME: root.home } });
  try {
    return briefHits(k, text, limit);
  } finally {
    k.close();
  }
}
