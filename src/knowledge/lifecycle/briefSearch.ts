/**
 * The search half of a run's brief (bridge.ts): the project's active specs
 * and knowhow that best match the task, as a read-only probe (the brief
 * changes no exposure count), with the documented minimum match, so an
 * unrelated task cites nothing.
 */
import { openKnowledge } from '../knowledge.js';
import type { WorkflowRoot } from '../format/root.js';

export interface BriefHit {
  id: string;
  sid: string | null;
  title: string;
  body: string;
}

export function searchIndexFor(root: WorkflowRoot, text: string, limit: number, env: NodeJS.ProcessEnv): BriefHit[] {
  const k = openKnowledge({ workflowRoot: root.projectDir, includeGlobal: root.includeGlobal, embedder: null, env: { ...env, MAESTRO_HOME: root.home } });
  try {
    return k
      .search(text, { limit: limit * 2, readOnlyProbe: true })
      .results.filter((r) => r.kind === 'spec' || r.kind === 'knowhow')
      .slice(0, limit)
      .map((r) => ({ id: r.id, sid: r.aliases.find((a) => /^S-\d{8}-/.test(a)) ?? null, title: r.name, body: r.snippet }));
  } finally {
    k.close();
  }
}
