/**
 * Knowledge API client (issue 5, FORMATS §5.3). The route may be missing on a
 * daemon built without it: a 404 turns into `{ available: false }` so the
 * screens say so instead of failing.
 */
import { ApiError, request } from './client.js';

export interface KnowledgeResult {
  source: 'wiki' | 'code';
  id: string;
  kind: string;
  name: string;
  detail?: string;
  rank?: number;
  score?: number;
  snippet?: string;
  summary?: string;
  category?: string;
  confidence?: string | number;
  selectionReason?: 'relevance' | 'diversity' | 'exploration';
}

export interface KnowledgeSearch {
  query: string;
  wikiCount: number;
  codeCount: number;
  codeIndex?: string;
  typeCounts: Record<string, number>;
  count: number;
  results: KnowledgeResult[];
}

export interface KnowledgeEntry {
  id: string;
  type?: string;
  title?: string;
  name?: string;
  category?: string;
  status?: string;
  date?: string;
  keywords?: string[];
  body?: string;
  content?: string;
  supersedes?: string | null;
  supersededBy?: string | null;
  /** Oldest first: the versions this entry evolved through. */
  chain?: { id: string; title?: string; status?: string; date?: string }[];
}

export interface ReviewCandidate {
  id: string;
  title: string;
  category?: string;
  summary?: string;
  status?: string;
  matches?: { id: string; name?: string; score?: number; relation?: string }[];
  evidence?: string[];
}

export interface AuditReport {
  generatedAt?: string | number;
  summary?: Record<string, number>;
  findings: { severity: string; id?: string; file?: string; line?: number; message: string }[];
}

export type Maybe<T> = { available: true; data: T } | { available: false };

async function optional<T>(p: Promise<T>): Promise<Maybe<T>> {
  try {
    return { available: true, data: await p };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404 && (err.code === 'HTTP_404' || err.code === 'NOT_FOUND' || err.code === 'FST_ERR_NOT_FOUND')) return { available: false };
    throw err;
  }
}

const enc = encodeURIComponent;

export const knowledge = {
  search: (params: { q: string; type?: string; category?: string; limit?: number }) => {
    const s = new URLSearchParams({ q: params.q, limit: String(params.limit ?? 30) });
    if (params.type) s.set('type', params.type);
    if (params.category) s.set('category', params.category);
    return optional(request<KnowledgeSearch>('GET', `/api/knowledge/search?${s}`));
  },
  entry: (id: string) => optional(request<{ entry: KnowledgeEntry }>('GET', `/api/knowledge/entries/${enc(id)}`)),
  reviewQueue: () => optional(request<{ candidates: ReviewCandidate[] }>('GET', '/api/knowledge/review')),
  resolve: (id: string, action: 'accept' | 'dismiss' | 'merge') => request<unknown>('POST', `/api/knowledge/review/${enc(id)}/resolve`, { action }),
  promote: (id: string) => request<unknown>('POST', `/api/knowledge/review/${enc(id)}/promote`, {}),
  audit: () => optional(request<AuditReport>('GET', '/api/knowledge/audit')),
};
