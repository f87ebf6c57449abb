/**
 * deduplicateKnowledge (FORMATS §8.6), run before a create: the same source
 * exploration, then a similar request (≥0.85) among same-type,
 * project-compatible entries, then content Jaccard (≥0.75). A duplicate
 * becomes an update only when the new confidence beats the old by > 0.1.
 */
import type { WikiEntry } from '../../knowledge/format/wiki/entries.js';
import type { EntryType } from '../../knowledge/format/wiki/layout.js';
import { isProjectCompatible } from '../wiki/scope.js';
import { contentJaccard, requestSimilarity } from '../text.js';

export const REQUEST_DEDUP_THRESHOLD = 0.85;
export const CONTENT_DEDUP_THRESHOLD = 0.75;
export const CONFIDENCE_GAP = 0.1;

export interface DedupCandidate {
  id?: string;
  type: EntryType;
  request: string;
  content: string;
  confidence: number;
  source: { sessionId: string; explorationId: string };
}

export type DedupOutcome =
  | { action: 'create' }
  | { action: 'update'; target: WikiEntry; reason: string }
  | { action: 'skip'; target: WikiEntry; reason: 'already_exists_same_source' | 'similar_request_exists' | 'similar_content_exists' };

export function deduplicateKnowledge(candidate: DedupCandidate, entries: readonly WikiEntry[], projectSlug: string): DedupOutcome {
  const higher = (old: WikiEntry): boolean => candidate.confidence > old.confidence + CONFIDENCE_GAP;
  const same = entries.find(
    (e) => e.source.explorationId && e.source.explorationId === candidate.source.explorationId && e.source.sessionId === candidate.source.sessionId,
  );
  if (same) {
    if ((candidate.id && candidate.id === same.id) || higher(same)) return { action: 'update', target: same, reason: 'same_source' };
    return { action: 'skip', target: same, reason: 'already_exists_same_source' };
  }
  const pool = entries.filter((e) => e.type === candidate.type && isProjectCompatible(e.tags, projectSlug));
  let best: { e: WikiEntry; sim: number } | null = null;
  for (const e of pool) {
    const sim = requestSimilarity(candidate.request, e.request);
    if (sim >= REQUEST_DEDUP_THRESHOLD && (!best || sim > best.sim)) best = { e, sim };
  }
  if (best) return higher(best.e) ? { action: 'update', target: best.e, reason: 'similar_request_higher_confidence' } : { action: 'skip', target: best.e, reason: 'similar_request_exists' };
  for (const e of pool) {
    if (contentJaccard(candidate.content, e.body) >= CONTENT_DEDUP_THRESHOLD) {
      return higher(e) ? { action: 'update', target: e, reason: 'similar_content_higher_confidence' } : { action: 'skip', target: e, reason: 'similar_content_exists' };
    }
  }
  return { action: 'create' };
}
