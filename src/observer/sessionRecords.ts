/**
 * What an ObserverSession (session.ts) writes into its bundle for one exploration (the retrieval
 * record of its question, the evidence of its summary) and why a session may hold its writes.
 */
import type { EvidenceEntry, RetrievalRecord, SummaryItem } from './bundle/types.js';
import { durationOf, tokenTotal } from './summary/digest.js';
import type { Exploration } from './transcript/types.js';
import type { WikiMatch } from './wiki/retrieval.js';

export interface SessionHold {
  reason: 'workspace_mismatch' | 'unknown_schema';
  /** What was found, where, and how to go on. */
  detail: string;
}

export function foreignHold(what: string): SessionHold {
  return {
    reason: 'workspace_mismatch',
    detail: `${what}: this wiki was written for another workspace, so nothing is written to it. To take it over (its bundles and summaries are kept), run \`maestro observe --adopt-wiki\`; or set FLOW_WIKI_DIR to another folder.`,
  };
}

export function toRetrievalRecord(hit: WikiMatch, now: number): RetrievalRecord {
  const { path: _absolute, ...recorded } = hit;
  return { origin: 'retrieved', ...recorded, capturedAt: now };
}

/** The snake_case evidence payload the real writers store (FORMATS §8.3). */
export function buildEvidence(sessionId: string, e: Exploration, item: SummaryItem, now: number): EvidenceEntry {
  const tools = e.nodes.filter((n) => n.type === 'tool');
  return {
    explorationId: e.id,
    schema_version: 1,
    saved_at: new Date(now).toISOString(),
    request: e.question,
    summary: item.text,
    result: e.status === 'interrupted' ? 'abandoned' : e.nodes.some((n) => n.type === 'error') ? 'failure' : 'success',
    duration: durationOf(e) ?? 0,
    tokens: tokenTotal(e.tokens),
    source: { session_id: sessionId, exploration_id: e.id },
    commands: tools.map((n) => n.command).filter((c): c is string => Boolean(c)).slice(0, 30),
    files: e.files.slice(0, 50),
    persist_meta: item.persistMeta ?? null,
    nodes: e.nodes.slice(0, 60).map((n) => ({ type: n.type, label: n.label, status: n.status })),
  };
}
