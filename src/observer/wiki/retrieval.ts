/**
 * Prior retrieval's seam (FORMATS §8.6): what is asked, what answers, and the thresholds. The
 * session, the curator and the agent tools depend on `WikiRetriever`; InMemoryWikiRetriever
 * (retriever.ts) is the implementation.
 */
import type { WikiEntry, WikiProblem } from '../../knowledge/format/wiki/entries.js';
import type { EntryType } from '../../knowledge/format/wiki/layout.js';
import type { RetrievalRecord } from '../bundle/types.js';

/** FORMATS §8.6 thresholds. */
export const WIKI_SEARCH_THRESHOLD = 0.5;
export const AGENT_CANDIDATE_THRESHOLD = 0.25;
export const DEFAULT_MATCH_THRESHOLD = 0.3;

/** A hit: what a session records of it (bundle/types.ts RetrievalRecord), and the file's absolute path. */
export interface WikiMatch extends Omit<RetrievalRecord, 'origin' | 'capturedAt'> {
  path: string;
}

export interface RetrievalQuery {
  text: string;
  /** A query built from an exploration (its question) needs ≥5 chars; a typed one ≥3. */
  derived?: boolean;
  threshold?: number;
  /** The exploration's own entry never answers its own question. */
  exclude?: { sessionId: string; explorationId: string };
  /** Types searched; prior retrieval uses contexts and entities, never summaries. */
  types?: readonly EntryType[];
  /** Off by default: retrieval only consumes project-compatible entries. */
  includeOtherProjects?: boolean;
  limit?: number;
}

export interface WikiRetriever {
  /** The best match at or above the threshold, or null. */
  search(query: RetrievalQuery): WikiMatch | null;
  /** Up to `limit` matches, best first (agent candidates, dedup). */
  searchMany(query: RetrievalQuery): WikiMatch[];
  /** Re-reads changed files now (after a write). */
  refresh(): void;
  /** Entries as last read, for dedup and lint. */
  entries(): WikiEntry[];
  problems(): WikiProblem[];
}
