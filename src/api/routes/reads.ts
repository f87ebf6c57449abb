/** Read-only routes: runs, approvals, events (paged), metrics, scheduler decisions, traces, where tasks stand. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { eventListQuery, idParam, idQuery, idString, MAX_ID, queryInt } from './schemas.js';
import { taskStandingResponse } from '../wire/knowledgeReview.js';
import { approvalListResponse, decisionListResponse, eventPageResponse, metricsResponse, runListResponse, runResponse, traceResponse } from '../wire/responses.js';

/** At most this many ids in one `GET /api/tasks/standing` (the CLI asks 200 at a time: a URL of about 4 kB). */
const STANDING_IDS = 500;
const idList = z
  .string()
  .max(STANDING_IDS * (MAX_ID + 1))
  .transform((s) => s.split(',').filter(Boolean))
  .pipe(z.array(idString).min(1, 'names no task id').max(STANDING_IDS, `names more than ${STANDING_IDS} task ids; ask in slices`))
  .describe('task ids, commas between');

/** Where tasks stand for their knowledge sessions (the CLI's `knowledge review` and `session list` ask it). */
function registerStandingRoute(app: FastifyInstance, doc: OpenApiDoc, { store }: Pick<ApiDeps, 'store'>): void {
  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/api/tasks/standing', summary: "Where tasks stand for their knowledge sessions: status, and the version a person replaced with why (any daemon's store answers alike)", tags: ['tasks'], query: z.object({ ids: idList }).strict(), response: taskStandingResponse },
    async ({ query }) => {
      const [tasks, superseded] = await Promise.all([store.tasks.byIds(query.ids), store.tasks.superseded(query.ids)]);
      return { tasks: tasks.map((t) => ({ id: t.id, status: t.status, superseded: superseded.get(t.id) ?? null })) };
    },
  );
}

export function registerReadRoutes(app: FastifyInstance, doc: OpenApiDoc, { store }: ApiDeps): void {
  registerStandingRoute(app, doc, { store });
  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/api/runs', summary: 'List runs', tags: ['runs'], query: z.object({ taskId: idQuery.optional(), traceId: idQuery.optional(), limit: queryInt(1, 5000).default(500) }).strict(), response: runListResponse },
    async ({ query }) => ({ runs: await store.runs.list(query) }),
  );

  defineRoute(app, doc, { method: 'GET', url: '/api/runs/:id', summary: 'Show a run', tags: ['runs'], params: idParam, response: runResponse }, async ({ params, reply }) => {
    const run = await store.runs.get(params.id);
    reply.header('x-trace-id', run.traceId);
    return { run };
  });

  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/api/approvals', summary: 'List approvals (newest first without taskId)', tags: ['approvals'], query: z.object({ taskId: idQuery.optional(), limit: queryInt(1, 1000).default(200) }).strict(), response: approvalListResponse },
    async ({ query }) => ({ approvals: await store.approvals.list(query) }),
  );

  defineRoute(app, doc, { method: 'GET', url: '/api/events', summary: 'Page through the event log: oldest first (after = the last id seen), or newest first with order=newest (before = the last id seen)', tags: ['events'], query: eventListQuery, response: eventPageResponse }, async ({ query }) => store.events.list(query));

  defineRoute(app, doc, { method: 'GET', url: '/api/metrics', summary: 'Tasks by status, run durations, tokens and cost', tags: ['metrics'], query: z.object({ projectId: idQuery.optional() }).strict(), response: metricsResponse }, async ({ query }) => ({
    tasksByStatus: await store.metrics.tasksByStatus(query.projectId),
    runDurations: await store.metrics.runDurations(query.projectId),
    usage: (await store.metrics.usageByProject()).filter((u) => !query.projectId || u.projectId === query.projectId),
  }));

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/api/scheduler/decisions',
      summary: 'Scheduler decisions: each claim with its score breakdown and the competitors it beat',
      tags: ['scheduler'],
      query: z.object({ taskId: idQuery.optional(), projectId: idQuery.optional(), limit: queryInt(1, 1000).default(50) }).strict(),
      response: decisionListResponse,
    },
    async ({ query }) => ({ decisions: await store.decisions.list(query) }),
  );

  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/api/traces/:traceId', summary: "A trace: the run it names within its task's plan → execute → review → merge chain, with their events", tags: ['traces'], params: z.object({ traceId: idString }).strict(), response: traceResponse },
    async ({ params, reply }) => {
      const [run] = await store.runs.list({ traceId: params.traceId, limit: 1 });
      if (!run) throw new MaestroError('UNKNOWN_RUN', `No run carries trace id "${params.traceId}".`);
      reply.header('x-trace-id', run.traceId);
      const task = await store.tasks.get(run.taskId);
      // The chain spans the task's versions: follow parentVersionId back to the first.
      const versions = [task];
      while (versions[0]!.parentVersionId) versions.unshift(await store.tasks.get(versions[0]!.parentVersionId!));
      const chain = [];
      for (const v of versions) {
        for (const r of await store.runs.list({ taskId: v.id })) {
          const events = [];
          let after: number | undefined;
          for (;;) {
            const page = await store.events.list({ traceId: r.traceId, after, limit: 1000 });
            events.push(...page.events);
            if (page.nextAfter === null) break;
            after = page.nextAfter;
          }
          chain.push({ run: r, taskVersion: v.version, events });
        }
      }
      return { traceId: params.traceId, task, chain };
    },
  );
}
