/**
 * The knowledge and observer wire schemas describe exactly the types the
 * knowledge library and the observer return: a field added there (or dropped)
 * breaks `npm run lint` here until knowledge.ts, knowledgeReview.ts or
 * observer.ts says so too (expectTypeOf is a type assertion checked by tsc).
 * (The observer routes' own answers, the session list and the proposal
 * decisions, are typed by these schemas in routes/observer.ts itself.) What the
 * routes really send is parsed in test/api/responses.test.ts.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { CheckoutCommit } from '../../daemon/checkoutKnowledge.js';
import type { KnowledgeEntry } from '../../knowledge/format/entry.js';
import type { CodeNode, GraphNeighbor, KgResponse } from '../../knowledge/graph/graph.js';
import type { CodeResponse, HealthReport, LoadedEntry, MixedResponse } from '../../knowledge/knowledge.js';
import type { AuditResult } from '../../knowledge/lifecycle/audit/audit.js';
import type { PromotionResult } from '../../knowledge/lifecycle/promote/promote.js';
import type { Match } from '../../knowledge/lifecycle/reconcile/matcher.js';
import type { resolveCandidate, ReviewCandidate, ReviewResult } from '../../knowledge/lifecycle/reconcile/review.js';
import type { runSearch } from '../../knowledge/search/params.js';
import type { FlowGraph, RetrievalRecord, SummaryItem, WriteRecord } from '../../observer/bundle/types.js';
import type { acceptProposal, listProposals, Proposal } from '../../observer/curation/proposals.js';
import type { ExplorationView, SessionView } from '../../observer/view.js';
import * as k from './knowledge.js';
import * as r from './knowledgeReview.js';
import * as o from './observer.js';

/** The promote route's answer: the library's result, and in a project's own checkout what the daemon committed. */
interface PromotionAnswer extends PromotionResult {
  commit?: CheckoutCommit | undefined;
}

type Out<S extends z.ZodType> = z.output<S>;

describe('knowledge and observer wire schemas', () => {
  it('are the knowledge library’s types, field for field', () => {
    expectTypeOf<Out<typeof k.knowledgeEntrySchema>>().toEqualTypeOf<KnowledgeEntry>();
    expectTypeOf<Out<typeof k.graphNeighborSchema>>().toEqualTypeOf<GraphNeighbor>();
    expectTypeOf<Out<typeof k.loadedEntrySchema>>().toEqualTypeOf<LoadedEntry>();
    expectTypeOf<Out<typeof k.codeNodeSchema>>().toEqualTypeOf<CodeNode>();
    expectTypeOf<Out<typeof k.mixedSearchResponse>>().toEqualTypeOf<MixedResponse>();
    expectTypeOf<Out<typeof k.kgSearchResponse>>().toEqualTypeOf<KgResponse>();
    expectTypeOf<Out<typeof k.codeSearchResponse>>().toEqualTypeOf<CodeResponse>();
    expectTypeOf<Out<typeof k.knowledgeSearchResponse>>().toEqualTypeOf<Awaited<ReturnType<typeof runSearch>>>();
    expectTypeOf<Out<typeof k.knowledgeHealthResponse>>().toEqualTypeOf<HealthReport>();
    expectTypeOf<Out<typeof r.matchSchema>>().toEqualTypeOf<Match>();
    expectTypeOf<Out<typeof r.reviewCandidateSchema>>().toEqualTypeOf<ReviewCandidate>();
    expectTypeOf<Out<typeof r.reviewResponse>>().toEqualTypeOf<ReviewResult>();
    expectTypeOf<Out<typeof r.resolutionResultSchema>>().toEqualTypeOf<ReturnType<typeof resolveCandidate>>();
    expectTypeOf<Out<typeof r.promotionResponse>>().toEqualTypeOf<PromotionAnswer>();
    expectTypeOf<Out<typeof r.auditResponse>>().toEqualTypeOf<AuditResult>();
  });

  it('are the observer’s types, field for field', () => {
    expectTypeOf<Out<typeof o.sessionViewSchema>>().toEqualTypeOf<SessionView>();
    expectTypeOf<Out<typeof o.explorationViewSchema>>().toEqualTypeOf<ExplorationView>();
    expectTypeOf<Out<typeof o.summaryItemSchema>>().toEqualTypeOf<SummaryItem>();
    expectTypeOf<Out<typeof o.retrievalRecordSchema>>().toEqualTypeOf<RetrievalRecord>();
    expectTypeOf<Out<typeof o.writeRecordSchema>>().toEqualTypeOf<WriteRecord>();
    expectTypeOf<Out<typeof o.flowGraphSchema>>().toEqualTypeOf<FlowGraph>();
    expectTypeOf<Out<typeof o.proposalSchema>>().toEqualTypeOf<Proposal>();
    expectTypeOf<Out<typeof o.proposalsResponse>>().toEqualTypeOf<ReturnType<typeof listProposals>>();
    expectTypeOf<Out<typeof o.proposalAcceptResponse>['proposal']>().toEqualTypeOf<ReturnType<typeof acceptProposal>['proposal']>();
  });

  it('refuse a field they do not describe (strict), so the answers test sees drift', () => {
    const hint = { wiki: 0.6, code: 0.4, reason: 'default' };
    expect(() => k.mixedSearchResponse.shape.sourceWeights.parse({ ...hint, extra: 1 })).toThrow(/extra/);
    expect(() => o.bundleLoadSchema.parse({ status: 'hit', reason: 'nope' })).toThrow(/reason/);
  });
});
