/**
 * Knowledge API client (src/api/routes/knowledge.ts, knowledgeReview.ts). Each
 * answer is the `z.output` of the response schema its route declares
 * (src/api/wire/knowledge.ts, knowledgeReview.ts) and the request bodies are
 * the zod schemas the daemon validates with (type-only imports: nothing of the
 * server is bundled), so a change there breaks this build instead of the
 * screen. Every call names the selected project; the daemon maps it to that
 * project's `.workflow/`. A daemon without a route answers 404 NOT_FOUND,
 * which becomes `{ available: false }`.
 */
import { ApiError, request } from './client.js';
import type { CodeNode, CodeSearchResult, EntryLoad, LoadedEntry, MixedSearch, SearchResult } from '../../../src/api/wire/knowledge.js';
import type { AuditFinding as Finding, AuditResult, Match, PromotionResult, ResolveResponse, ReviewCandidate, ReviewQueue, ReviewQueueSession, ReviewResult } from '../../../src/api/wire/knowledgeReview.js';
import type { PromoteBody, ResolveBody } from '../../../src/knowledge/lifecycle/reviewSchemas.js';

export type { AuditResult, CodeNode, CodeSearchResult, EntryLoad, Finding, LoadedEntry, Match, PromotionResult, ResolveResponse, ReviewCandidate, ReviewQueue, ReviewQueueSession, ReviewResult, SearchResult };
/** The board's search sends neither kg nor code: the answer is always the mixed page. */
export type SearchResponse = MixedSearch;
export type { PromoteBody, ResolveBody };

/** The server's `as` choices, restated (a runtime import would bundle zod); the checks below fail the build if they drift. */
export const RESOLVE_AS = ['duplicate', 'related', 'conflict', 'supersede', 'unique'] as const satisfies readonly ResolveBody['as'][];
type Missing = Exclude<ResolveBody['as'], (typeof RESOLVE_AS)[number]>;
export const resolveAsComplete: [Missing] extends [never] ? true : Missing = true;

export type Maybe<T> = { available: true; data: T } | { available: false };

async function optional<T>(p: Promise<T>): Promise<Maybe<T>> {
  try {
    return { available: true, data: await p };
  } catch (err) {
    // Only "no such route" means unavailable; an unknown entry or session is a real answer.
    if (err instanceof ApiError && err.status === 404 && (err.code === 'HTTP_404' || err.code === 'NOT_FOUND' || err.code === 'FST_ERR_NOT_FOUND')) return { available: false };
    throw err;
  }
}

const enc = encodeURIComponent;
const withProject = (projectId: string, extra: Record<string, string> = {}) => new URLSearchParams({ projectId, ...extra }).toString();

export const knowledge = {
  search: (projectId: string, params: { q: string; type?: string; category?: string; limit?: number }) => {
    const s = new URLSearchParams({ projectId, q: params.q, limit: String(params.limit ?? 30) });
    if (params.type) s.set('type', params.type);
    if (params.category) s.set('category', params.category);
    return optional(request<MixedSearch>('GET', `/api/knowledge/search?${s}`));
  },
  entry: (projectId: string, id: string) => optional(request<EntryLoad>('GET', `/api/knowledge/entries/${enc(id)}?${withProject(projectId, { includeDeprecated: 'true' })}`)),
  reviewQueue: (projectId: string) => optional(request<ReviewQueue>('GET', `/api/knowledge/review?${withProject(projectId)}`)),
  /** One session's review: what `maestro task show` asks for a task at exec_review (src/cli/commands/taskKnowledge.ts). */
  session: (projectId: string, sessionId: string) => optional(request<ReviewResult>('GET', `/api/knowledge/review/${enc(sessionId)}?${withProject(projectId)}`)),
  reconcile: (projectId: string, sessionId: string) => request<ReviewResult>('POST', `/api/knowledge/review/${enc(sessionId)}/reconcile?${withProject(projectId)}`),
  resolve: (projectId: string, sessionId: string, body: ResolveBody) => request<ResolveResponse>('POST', `/api/knowledge/review/${enc(sessionId)}/resolve?${withProject(projectId)}`, body),
  promote: (projectId: string, sessionId: string, body: PromoteBody) => request<PromotionResult>('POST', `/api/knowledge/review/${enc(sessionId)}/promote?${withProject(projectId)}`, body),
  audit: (projectId: string, prune = false) => optional(request<AuditResult>('GET', `/api/knowledge/audit?${withProject(projectId, { prune: String(prune) })}`)),
};
