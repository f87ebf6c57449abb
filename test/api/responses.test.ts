/**
 * Every route declares its response schema (src/api/wire/), and what it
 * really sends matches it: a task runs through the scripted agent to
 * exec_review, a project holds specs, knowhow, code, a staged candidate and an
 * observer wiki (wireFixtures.ts), then each route's answer is parsed through
 * its schema (strict: a field the schema does not describe fails here).
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { OpenApiDoc } from '../../src/api/route.js';
import * as kwire from '../../src/api/wire/knowledge.js';
import * as rwire from '../../src/api/wire/knowledgeReview.js';
import * as owire from '../../src/api/wire/observer.js';
import * as wire from '../../src/api/wire/responses.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { knowledgeProject, type KnowledgeProject } from './wireFixtures.js';

const SCRIPT = fileURLToPath(new URL('../daemon/fixtures/ask.yaml', import.meta.url));
/**
 * Routes without a JSON response schema, on purpose: the WebSocket upgrade (a 101 has no body for OpenAPI to
 * describe; its messages are typed in routes/ws.ts) and the board's static files (HTML, scripts and styles
 * the build writes, not an API answer).
 */
const NOT_YET = [/^GET \/api\/ws$/, /^GET \/(?!api\/)/];

/** The documented error shape (src/api/errors.ts), which the knowledge and observer routes answer too. */
const errorAnswer = z.strictObject({ error: z.strictObject({ code: z.string(), message: z.string().min(1), details: z.record(z.string(), z.unknown()).optional() }) });

describe('route response schemas', () => {
  let d: TestDaemon;
  let doc: OpenApiDoc | null = null;
  let taskId = '';
  let kp: KnowledgeProject;
  let kProjectId = '';
  beforeAll(async () => {
    const capture = (_app: FastifyInstance, given: OpenApiDoc) => void (doc = given);
    kp = await knowledgeProject();
    d = await startTestDaemon({ tickMs: 100 }, { plugins: [capture], observer: kp.observer });
    kProjectId = (await d.store.projects.create({ name: 'knowledge', repoPath: kp.dir, config: {} })).id;
    // The daemon opens a project's knowledge index on its first read and keeps it until it stops: open it here, the suite's.
    expect((await d.app.inject({ method: 'GET', url: `/api/knowledge/health?projectId=${kProjectId}` })).statusCode).toBe(200);
    const project = await d.store.projects.create({ name: 'wire', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script: SCRIPT } } });
    taskId = (await d.store.tasks.create({ projectId: project.id, title: 'Stream the wire', complexity: 'easy' })).id;
    d.orchestrator.kick();
    await until(d.bus, async () => (await d.store.tasks.get(taskId)).status === 'exec_review', 'exec_review', 120_000);
  }, budget(180_000));
  afterAll(async () => {
    await d?.stop({ graceMs: 2000 });
    removeTempDirs();
  });

  const send = async <S extends z.ZodType>(schema: S, method: 'GET' | 'POST', url: string, payload?: object, status = 200): Promise<z.output<S>> => {
    const res = await d.app.inject({ method, url, ...(payload ? { payload } : {}) });
    expect([method, url, res.statusCode, res.statusCode === status ? '' : res.body]).toEqual([method, url, status, '']);
    return schema.parse(JSON.parse(res.body));
  };
  const get = <S extends z.ZodType>(schema: S, url: string) => send(schema, 'GET', url);

  it('the OpenAPI document gives every route a response schema', async () => {
    const paths = (await get(wire.openApiResponse, '/api/openapi.json')).paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
    const served = [...doc!.served].filter((r) => !NOT_YET.some((re) => re.test(r)));
    expect(served.length).toBeGreaterThan(25);
    const missing = served.filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      const ok = Object.entries(paths[path]?.[method.toLowerCase()]?.responses ?? {}).find(([status]) => /^2\d\d$/.test(status))?.[1];
      return !Object.values(ok?.content ?? {}).some((c) => c.schema);
    });
    expect(missing).toEqual([]);
    expect(paths['/api/tasks/{id}']!.get!.responses['200']!.content!['application/json']!.schema).toMatchObject({ required: expect.arrayContaining(['task', 'runs', 'children', 'lastDecision', 'versions']) });
    expect(Object.keys(paths['/api/tasks/{taskId}/stream']!.get!.responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(served.filter((r) => /\/api\/(knowledge|observer)\//.test(r)).length).toBeGreaterThanOrEqual(14);
    expect(paths['/api/knowledge/review/{sessionId}']!.get!.responses['200']!.content!['application/json']!.schema).toMatchObject({ required: expect.arrayContaining(['schema', 'session_id', 'candidates']) });
  });

  it('what each core route sends is what its schema says', async () => {
    const detail = await get(wire.taskDetailResponse, `/api/tasks/${taskId}`);
    expect(detail.runs.map((r) => r.kind)).toEqual(expect.arrayContaining(['execute', 'review']));
    expect(detail.lastDecision).not.toBeNull();
    const projectId = detail.task.projectId;
    await get(wire.taskFullListResponse, `/api/tasks?projectId=${projectId}`);
    await get(wire.taskBoardListResponse, `/api/tasks?projectId=${projectId}&view=board`);
    await get(wire.projectListResponse, '/api/projects');
    await get(wire.projectDetailResponse, `/api/projects/${projectId}`);
    const { runs } = await get(wire.runListResponse, `/api/runs?taskId=${taskId}`);
    await get(wire.runResponse, `/api/runs/${runs[0]!.id}`);
    const trace = await get(wire.traceResponse, `/api/traces/${runs[0]!.traceId}`);
    expect(trace.chain[0]!.events.length).toBeGreaterThan(0);
    await get(wire.approvalListResponse, '/api/approvals');
    // Where tasks stand for their sessions: the ids the store holds (an unknown one left out); none or too many, refused by name.
    expect((await get(rwire.taskStandingResponse, `/api/tasks/standing?ids=${taskId},t_0000000000000000`)).tasks).toEqual([{ id: taskId, status: 'exec_review', superseded: null }]);
    expect((await send(errorAnswer, 'GET', '/api/tasks/standing?ids=', undefined, 400)).error.message).toContain('ids');
    const many = Array.from({ length: 501 }, (_, i) => `t_${String(i).padStart(16, '0')}`).join(',');
    expect((await send(errorAnswer, 'GET', `/api/tasks/standing?ids=${many}`, undefined, 400)).error.message).toContain('names more than 500 task ids; ask in slices');
    expect((await get(wire.eventPageResponse, `/api/events?taskId=${taskId}`)).events.length).toBeGreaterThan(0);
    expect((await get(wire.metricsResponse, `/api/metrics?projectId=${projectId}`)).runDurations.length).toBeGreaterThan(0);
    expect((await get(wire.decisionListResponse, `/api/scheduler/decisions?taskId=${taskId}`)).decisions.length).toBeGreaterThan(0);
    expect((await get(wire.diffResponse, `/api/tasks/${taskId}/diff`)).files.length).toBeGreaterThan(0);
    await get(wire.checksResponse, `/api/tasks/${taskId}/checks`);
    expect((await get(wire.findingsResponse, `/api/tasks/${taskId}/findings`)).verdicts.length).toBeGreaterThan(0);
    const execute = runs.find((r) => r.kind === 'execute')!;
    expect((await get(wire.transcriptSearchResponse, `/api/tasks/${taskId}/transcript?q=needle&runId=${execute.id}`)).matches.length).toBeGreaterThan(0);
    await get(wire.healthResponse, '/api/health');
    await get(wire.agentListResponse, '/api/agents');
  });

  it('what each knowledge route sends is what its schema says', async () => {
    const q = (extra: Record<string, string> = {}) => new URLSearchParams({ projectId: kProjectId, ...extra }).toString();
    const base = '/api/knowledge';
    // The review queue: this project's staged session and the fixture's fabric session.
    const queue = await get(rwire.reviewQueueResponse, `${base}/review?${q()}`);
    expect(queue.sessions.map((s) => s.session_id)).toContain(kp.sessionId);
    const sid = kp.sessionId;
    const reconciled = await send(rwire.reviewResponse, 'POST', `${base}/review/${sid}/reconcile?${q()}`, {});
    expect(reconciled.candidates.map((c) => [c.candidate_id, c.receipt])).toEqual([[kp.candidate, 'fresh']]);
    await get(rwire.reviewResponse, `${base}/review/${sid}?${q()}`);
    const resolved = await send(rwire.resolveResponse, 'POST', `${base}/review/${sid}/resolve?${q()}`, { candidate: kp.candidate, as: 'unique', reason: 'no rule covers shutdown yet' });
    expect(resolved.review.candidates[0]!.resolution).toMatchObject({ status: 'confirmed' });
    expect((await send(rwire.promotionResponse, 'POST', `${base}/review/${sid}/promote?${q()}`, { candidates: [kp.candidate] })).promoted).toHaveLength(1);
    await get(rwire.auditResponse, `${base}/audit?${q({ prune: 'true' })}`);

    // Search: the mixed page (the promoted spec), the code graph (built by this search), the graph; then the
    // mixed page again, now with the code symbol in it; the wiki entry is tagged for another project (all projects).
    expect((await get(kwire.mixedSearchResponse, `${base}/search?${q({ q: 'queues drain before shutdown' })}`)).results[0]).toMatchObject({ source: 'wiki', name: 'Queues drain before shutdown' });
    const code = await get(kwire.codeSearchResponse, `${base}/search?${q({ q: 'drainQueue', code: 'true' })}`);
    expect(code.results.map((r) => r.name)).toContain('drainQueue');
    expect((await get(kwire.kgSearchResponse, `${base}/search?${q({ q: 'drain queue', kg: 'true' })}`)).count).toBeGreaterThan(0);
    const mixed = await get(kwire.mixedSearchResponse, `${base}/search?${q({ q: 'drainQueue' })}`);
    expect(mixed.results.map((r) => r.source)).toContain('code');
    expect((await get(kwire.mixedSearchResponse, `${base}/search?${q({ q: 'nginx websockets', allProjects: 'true' })}`)).results.map((r) => r.kind)).toContain('wiki');

    const list = await get(kwire.entryListResponse, `${base}/entries?${q({ includeDeprecated: 'true' })}`);
    expect(new Set(list.entries.map((e) => e.kind))).toEqual(new Set(['spec', 'knowhow', 'wiki']));
    const active = await get(kwire.entryLoadResponse, `${base}/entries/${encodeURIComponent(list.entries.find((e) => e.status === 'active')!.id)}?${q()}`);
    expect(active).toMatchObject({ status: 'active', neighbors: expect.any(Array) });
    const deprecated = list.entries.find((e) => e.status === 'deprecated')!;
    expect(await get(kwire.entryLoadResponse, `${base}/entries/${encodeURIComponent(deprecated.id)}?${q({ includeDeprecated: 'true' })}`)).toMatchObject({ status: 'deprecated' });
    const node = await get(kwire.entryLoadResponse, `${base}/entries/${encodeURIComponent(code.results[0]!.id)}?${q()}`);
    expect(node).toMatchObject({ name: code.results[0]!.name, filePath: 'src/queue.ts' });
    await get(kwire.knowledgeHealthResponse, `${base}/health?${q()}`);
    await get(kwire.knowledgeHealthResponse, `${base}/health?${q({ kind: 'wiki' })}`);

    // Errors keep the documented shape.
    expect((await send(errorAnswer, 'GET', `${base}/entries/nope?${q()}`, undefined, 404)).error.code).toBe('UNKNOWN_KNOWLEDGE_ID');
    expect((await send(errorAnswer, 'GET', `${base}/entries/${encodeURIComponent(deprecated.id)}?${q()}`, undefined, 410)).error).toMatchObject({ code: 'DEPRECATED_KNOWLEDGE', details: { id: deprecated.id } });
    expect((await send(errorAnswer, 'GET', `${base}/review/nope?${q()}`, undefined, 404)).error.code).toBe('UNKNOWN_SESSION');
  });

  it('what each observer route sends is what its schema says', async () => {
    const { sessions } = await get(owire.sessionListResponse, '/api/observer/sessions');
    expect(sessions.map((s) => [s.sessionId, s.load.status]).sort()).toEqual([[kp.bundled, expect.any(String)], [kp.torn, 'corrupted']]);
    const view = await get(owire.observerSessionResponse, `/api/observer/sessions/${kp.bundled}`);
    expect('explorations' in view && view.explorations.length).toBeGreaterThan(0);
    expect(await get(owire.observerSessionResponse, `/api/observer/sessions/${kp.torn}`)).toMatchObject({ session: null, load: { status: 'corrupted' } });
    // Without an agent each session filed a proposal for the wiki entry it would have updated.
    const { open } = await get(owire.proposalsResponse, '/api/observer/proposals');
    expect(open.map((p) => p.source.sessionId).sort()).toEqual([kp.bundled, kp.torn]);
    const accepted = await send(owire.proposalAcceptResponse, 'POST', `/api/observer/proposals/${open[0]!.id}/accept`, {});
    expect(accepted.entry.id).toBe('C001');
    expect((await send(owire.proposalDismissResponse, 'POST', `/api/observer/proposals/${open[1]!.id}/dismiss`, { note: 'already said' })).proposal).toMatchObject({ status: 'dismissed', note: 'already said' });
    expect((await get(owire.proposalsResponse, '/api/observer/proposals')).closed.map((p) => p.status).sort()).toEqual(['accepted', 'dismissed']);

    expect((await send(errorAnswer, 'GET', '/api/observer/sessions/nope', undefined, 404)).error.code).toBe('UNKNOWN_SESSION');
    expect((await send(errorAnswer, 'GET', '/api/observer/sessions/..%2Fetc', undefined, 400)).error.code).toBe('BAD_INPUT');
  });

  it('each SSE item and each transcript line is what the stream schemas say', async () => {
    const { runs } = await get(wire.runListResponse, `/api/runs?taskId=${taskId}`);
    const execute = runs.find((r) => r.kind === 'execute')!;
    // Replayed from the run's outbox (the run has ended): every item up to its result.
    const ac = new AbortController();
    const res = await d.fetch(`/api/tasks/${taskId}/stream?lastEventId=${execute.id}:0`, { signal: ac.signal });
    const items: z.output<typeof wire.streamItem>[] = [];
    let buf = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const fields = Object.fromEntries(buf.slice(0, i).split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]));
        buf = buf.slice(i + 2);
        if (fields.data) items.push(wire.streamItem.parse({ id: fields.id, kind: fields.event, data: JSON.parse(fields.data) }));
      }
      if (items.some((it) => it.kind === 'result')) break;
    }
    ac.abort();
    expect(items.flatMap((it) => (it.kind === 'token' ? [it.data.text] : [])).join('')).toContain('second token');
    const transcript = await d.app.inject({ method: 'GET', url: `/api/tasks/${taskId}/transcript?runId=${execute.id}` });
    expect(transcript.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = transcript.body.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) wire.transcriptLine.parse(JSON.parse(line));
  });
});
