/**
 * The board's client reads what the routes declare: each method of `api`
 * resolves to the `z.output` of the response schema its route names in its
 * spec (src/api/routes/*.ts → src/api/wire/responses.ts). A type-level test:
 * `npm run lint` (tsc -p web) fails when a route's schema and the client part.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as wire from '../../../src/api/wire/responses.js';
import { api } from './client.js';
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
    expectTypeOf<Answer<typeof api.reject>>().toEqualTypeOf<z.output<typeof wire.rejectResponse>>();
    expectTypeOf<Answer<typeof api.reply>>().toEqualTypeOf<z.output<typeof wire.runMessageResponse>>();
    expectTypeOf<Answer<typeof api.runs>>().toEqualTypeOf<z.output<typeof wire.runListResponse>>();
    expectTypeOf<Answer<typeof api.events>>().toEqualTypeOf<z.output<typeof wire.eventPageResponse>>();
    expectTypeOf<Answer<typeof api.diff>>().toEqualTypeOf<z.output<typeof wire.diffResponse>>();
    expectTypeOf<Answer<typeof api.checks>>().toEqualTypeOf<z.output<typeof wire.checksResponse>>();
    expectTypeOf<Answer<typeof api.findings>>().toEqualTypeOf<z.output<typeof wire.findingsResponse>>();
    expectTypeOf<Answer<typeof api.health>>().toEqualTypeOf<z.output<typeof wire.healthResponse>>();
    // The SSE items the stream hands to the screen.
    type OnItem = Parameters<typeof openTaskStream>[1]['onItem'];
    expectTypeOf<Parameters<OnItem>[0]>().toEqualTypeOf<z.output<typeof wire.streamItem>>();
  });
});
