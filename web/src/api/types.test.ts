/**
 * The board's client reads what the routes declare: each method of `api`
 * resolves to the `z.output` of the response schema its route names in its
 * spec (src/api/routes/*.ts → src/api/wire/responses.ts). A type-level test:
 * `npm run lint` (tsc -p web) fails when a route's schema and the client part.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as wire from '../../../src/api/wire/responses.js';
import type * as kw from '../../../src/api/wire/knowledge.js';
import type * as rw from '../../../src/api/wire/knowledgeReview.js';
import type * as ow from '../../../src/api/wire/observer.js';
import { api } from './client.js';
import { knowledge, type Maybe } from './knowledge.js';
import { observer } from './observer.js';
import type { openTaskStream } from './stream.js';

type Answer<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;

describe('the web client types', () => {
  it('are the routes’ response schemas', () => {
    expectTypeOf<Answer<typeof api.task>>().toEqualTypeOf<z.output<typeof wire.taskDetailResponse>>();
    expectTypeOf<Answer<typeof api.trace>>().toEqualTypeOf<z.output<typeof wire.traceResponse>>();
    expectTypeOf<Answer<typeof api.metrics>>().toEqualTypeOf<z.output<typeof wire.metricsResponse>>();
    expectTypeOf<Answer<typeof api.decisions>>().toEqualTypeOf<z.output<typeof wire.decisionListResponse>>();
    expectTypeOf<Answer<typeof api.searchTranscript>>().toEqualTypeOf<z.output<typeof wire.transcriptSearchResponse>>();
    expectTypeOf<Answer<typeof api.project>>().toEqualTypeOf<z.output<typeof wire.projectDetailResponse>>();
    expectTypeOf<Answer<typeof api.projects>>().toEqualTypeOf<z.output<typeof wire.projectListResponse>>();
    expectTypeOf<Answer<typeof api.tasks>>().toEqualTypeOf<z.output<typeof wire.taskBoardListResponse>>();
    expectTypeOf<Answer<typeof api.createTask>>().toEqualTypeOf<z.output<typeof wire.taskResponse>>();
    expectTypeOf<Answer<typeof api.editTask>>().toEqualTypeOf<z.output<typeof wire.taskResponse>>();
    expectTypeOf<Answer<typeof api.reject>>().toEqualTypeOf<z.output<typeof wire.rejectResponse>>();
    expectTypeOf<Answer<typeof api.reply>>().toEqualTypeOf<z.output<typeof wire.runMessageResponse>>();
    expectTypeOf<Answer<typeof api.runs>>().toEqualTypeOf<z.output<typeof wire.runListResponse>>();
    expectTypeOf<Answer<typeof api.events>>().toEqualTypeOf<z.output<typeof wire.eventPageResponse>>();
    expectTypeOf<Answer<typeof api.diff>>().toEqualTypeOf<z.output<typeof wire.diffResponse>>();
    expectTypeOf<Answer<typeof api.checks>>().toEqualTypeOf<z.output<typeof wire.checksResponse>>();
    expectTypeOf<Answer<typeof api.findings>>().toEqualTypeOf<z.output<typeof wire.findingsResponse>>();
    expectTypeOf<Answer<typeof api.health>>().toEqualTypeOf<z.output<typeof wire.healthResponse>>();
    // Knowledge and observer (src/api/wire/knowledge.ts, knowledgeReview.ts, observer.ts); the board's search sends neither kg nor code.
    expectTypeOf<Answer<typeof knowledge.search>>().toEqualTypeOf<Maybe<z.output<typeof kw.mixedSearchResponse>>>();
    expectTypeOf<Answer<typeof knowledge.entry>>().toEqualTypeOf<Maybe<z.output<typeof kw.entryLoadResponse>>>();
    expectTypeOf<Answer<typeof knowledge.reviewQueue>>().toEqualTypeOf<Maybe<z.output<typeof rw.reviewQueueResponse>>>();
    expectTypeOf<Answer<typeof knowledge.reconcile>>().toEqualTypeOf<z.output<typeof rw.reviewResponse>>();
    expectTypeOf<Answer<typeof knowledge.resolve>>().toEqualTypeOf<z.output<typeof rw.resolveResponse>>();
    expectTypeOf<Answer<typeof knowledge.promote>>().toEqualTypeOf<z.output<typeof rw.promotionResponse>>();
    expectTypeOf<Answer<typeof knowledge.audit>>().toEqualTypeOf<Maybe<z.output<typeof rw.auditResponse>>>();
    expectTypeOf<Answer<typeof observer.sessions>>().toEqualTypeOf<z.output<typeof ow.sessionListResponse>['sessions'] | null>();
    expectTypeOf<Answer<typeof observer.session>>().toEqualTypeOf<z.output<typeof ow.observerSessionResponse>>();
    expectTypeOf<Answer<typeof observer.proposals>>().toEqualTypeOf<z.output<typeof ow.proposalsResponse>>();
    expectTypeOf<Answer<typeof observer.decide<'accept'>>>().toEqualTypeOf<z.output<typeof ow.proposalAcceptResponse>>();
    expectTypeOf<Answer<typeof observer.decide<'dismiss'>>>().toEqualTypeOf<z.output<typeof ow.proposalDismissResponse>>();
    // The SSE items the stream hands to the screen.
    type OnItem = Parameters<typeof openTaskStream>[1]['onItem'];
    expectTypeOf<Parameters<OnItem>[0]>().toEqualTypeOf<z.output<typeof wire.streamItem>>();
  });
});
