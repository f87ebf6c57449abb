/**
 * What a run's brief reads from the knowledge index (bridge.ts): the specs
 * the task's keywords name, and the project's active specs and knowhow that
 * best match the task, as a read-only probe (the brief changes no exposure
 * count), with the documented minimum match, so an unrelated task cites
 * nothing. Only the spec and knowhow files are re-checked first: the brief
 * cites neither the wiki nor the run ledgers, and the ledgers' walk grows
 * with every run the project has had (knowledge.ts `brief`).
 *
 * Two ways to reach the index: the daemon reads its KnowledgeService's warm
 * handle for the project (service.ts `brief`: one handle per project for the
 * daemon's life, shared with the knowledge routes, its keyword index kept
 * until the index changes); a process without a service opens, reads and
 * closes its own (`briefFromIndex`).
 */
import { openKnowledge, type BriefLimits, type Knowledge } from '../knowledge.js';
import type { WorkflowRoot } from '../format/root.js';
import type { KeywordHit } from '../search/keywordIndex.js';

export interface BriefHit {
  id: string;
  sid: string | null;
  title: string;
  body: string;
}

export interface BriefKnowledge {
  /** Specs picked by the keywords they declare (FORMATS §1.8). */
  specs: KeywordHit[];
  /** Specs and knowhow found by search. */
  found: BriefHit[];
}

/** How the bridge reads a brief's knowledge: the workflow root, the task's text, at most this many of each. */
export type BriefLookup = (root: WorkflowRoot, text: string, limits: BriefLimits) => BriefKnowledge;

/** The brief's knowledge from an open handle. */
export function briefOf(k: Knowledge, text: string, limits: BriefLimits): BriefKnowledge {
  const r = k.brief(text, limits);
  return { specs: r.specs, found: r.found.map((h) => ({ id: h.id, sid: h.aliases.find((a) => /^S-\d{8}-/.test(a)) ?? null, title: h.name, body: h.body })) };
}

/** One-shot: a handle of its own, read and closed (a process without a KnowledgeService). */
export function briefFromIndex(root: WorkflowRoot, text: string, limits: BriefLimits, env: NodeJS.ProcessEnv): BriefKnowledge {
  const k = openKnowledge({ workflowRoot: root.projectDir, includeGlobal: root.includeGlobal, embedder: null, env: { ...env, MAESTRO_HOME: root.home } });
  try {
    return briefOf(k, text, limits);
  } finally {
    k.close();
  }
}
