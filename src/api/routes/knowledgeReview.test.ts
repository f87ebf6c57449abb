/** The review, promotion and audit routes over a real `.workflow/`: good paths, bad input, confinement. */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandler } from '../errors.js';
import { afterEach, describe, expect, it } from 'vitest';
import { project } from '../../../test/helpers/knowledge2.js';
import { MaestroError } from '../../core/errors.js';
import { OpenApiDoc } from '../route.js';
import { knowledgeRoutes } from './knowledge.js';
import { createKnowledgePool, type KnowledgePool } from '../../knowledge/pool.js';
import { stage } from '../../knowledge/lifecycle/session/ops.js';
import { appendSpecEntry } from '../../knowledge/format/specWriter.js';
import { createSession } from '../../knowledge/lifecycle/session/store.js';
import { createLifecycleContext } from '../../knowledge/lifecycle/context.js';

const open: Array<{ app: FastifyInstance; pool: KnowledgePool }> = [];
afterEach(async () => {
  for (const { app, pool } of open.splice(0)) {
    await app.close();
    pool.stop();
  }
});

async function serve(projects: Record<string, string>) {
  const pool = createKnowledgePool({ env: process.env });
  const app = Fastify();
  installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
  const doc = new OpenApiDoc();
  const lifecycle = createLifecycleContext({ embedder: null });
  await app.register(knowledgeRoutes, {
    pool,
    lifecycle,
    env: process.env,
    doc,
    projectRoot: async (id: string) => {
      const dir = projects[id];
      if (!dir) throw new MaestroError('UNKNOWN_PROJECT', `No project ${id}.`);
      return dir;
    },
  });
  open.push({ app, pool });
  return { app, doc, lifecycle };
}

function staged() {
  const p = project();
  createSession(p.root, 'task-1', 'teach the board');
  const c = stage(p.root, { target: 'spec', title: 'Queues drain before shutdown', content: 'Every queue is drained before the process shuts down, so no accepted job is lost.', category: 'coding', session: 'task-1', evidence: ['src/queue.ts:12'] }, process.env).candidate;
  return { ...p, candidate: c.candidate_id };
}

describe('knowledge review routes', () => {
  it('reconcile and resolve with refresh score the candidates first, in slices off the event loop (scoreAhead.ts)', async () => {
    const p = staged();
    const { app, lifecycle } = await serve({ P1: p.dir });
    const rec = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/reconcile?projectId=P1' });
    expect(rec.statusCode).toBe(200);
    expect(lifecycle.scored.hits).toBe(1); // the refresh found its one candidate scored
    // The project's knowledge changed: the receipt is stale, and a resolve that refreshes scores ahead again.
    appendSpecEntry(p.root, { category: 'coding', title: 'Drain first', content: 'Queues are drained first.', keywords: ['queue'] });
    const res = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/resolve?projectId=P1', payload: { candidate: p.candidate, as: 'unique', reason: 'new rule', refresh: true } });
    expect(res.statusCode).toBe(200);
    expect(lifecycle.scored.hits).toBe(2);
  });

  it('list the queue, reconcile, resolve, promote and audit a real project', async () => {
    const p = staged();
    const { app, doc } = await serve({ P1: p.dir });
    const queue = await app.inject({ method: 'GET', url: '/api/knowledge/review?projectId=P1' });
    expect(queue.statusCode).toBe(200);
    const s = queue.json().sessions;
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ session_id: 'task-1', objective: 'teach the board', status: 'open' });
    expect(s[0].review.candidates).toEqual([expect.objectContaining({ candidate_id: p.candidate, title: 'Queues drain before shutdown', receipt: 'missing', status: 'pending' })]);

    // Not reconciled yet: resolving is refused and nothing changes.
    const stale = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/resolve?projectId=P1', payload: { candidate: p.candidate, as: 'unique', reason: 'new rule' } });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.code).toBe('STALE_RECEIPT');

    const rec = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/reconcile?projectId=P1' });
    expect(rec.statusCode).toBe(200);
    expect(rec.json().candidates[0]).toMatchObject({ candidate_id: p.candidate, receipt: 'fresh', disposition: expect.any(String) });

    const one = await app.inject({ method: 'GET', url: '/api/knowledge/review/task-1?projectId=P1' });
    expect(one.json()).toMatchObject({ schema: 'knowledge-review/1.0', session_id: 'task-1' });

    const res = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/resolve?projectId=P1', payload: { candidate: p.candidate, as: 'unique', reason: '  no existing rule covers shutdown  ' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().resolution).toMatchObject({ candidate_id: p.candidate, disposition: 'unique', promotion_eligibility: 'eligible' });
    expect(res.json().review.candidates[0].resolution).toMatchObject({ status: 'confirmed', reason: 'no existing rule covers shutdown' });

    const prom = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/promote?projectId=P1', payload: { candidates: [p.candidate] } });
    expect(prom.statusCode).toBe(200);
    const promoted = prom.json().promoted;
    expect(promoted).toEqual([expect.objectContaining({ candidate_id: p.candidate, outcome: 'created' })]);
    const specs = readdirSync(join(p.dir, '.workflow', 'specs')).map((f) => readFileSync(join(p.dir, '.workflow', 'specs', f), 'utf8')).join('\n');
    expect(specs).toContain('Every queue is drained before the process shuts down');
    expect(specs).toContain(promoted[0].promoted_id);
    // Promoting again reports it, writes nothing twice.
    const again = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/promote?projectId=P1', payload: { candidates: [p.candidate] } });
    expect(again.json().already_promoted).toEqual([{ candidate_id: p.candidate, promoted_id: promoted[0].promoted_id }]);

    const audit = await app.inject({ method: 'GET', url: '/api/knowledge/audit?projectId=P1&scope=spec&prune=true' });
    expect(audit.statusCode).toBe(200);
    expect(audit.json()).toMatchObject({ schema: 'knowledge-audit/1.0', scope: 'spec', applied: { count: 0 }, prune_plan: expect.any(Array) });
    expect(audit.json().spec_health.active).toBeGreaterThanOrEqual(3);

    const paths = Object.keys((doc.document() as { paths: Record<string, unknown> }).paths);
    expect(paths).toEqual(expect.arrayContaining(['/api/knowledge/review', '/api/knowledge/review/{sessionId}/resolve', '/api/knowledge/review/{sessionId}/promote', '/api/knowledge/audit']));
  });

  it("a missing or unreadable receipt tells the caller the request that rebuilds it, not the CLI's --refresh", async () => {
    const p = staged();
    const { app } = await serve({ P1: p.dir });
    const url = (action: string) => `/api/knowledge/review/task-1/${action}?projectId=P1`;
    const resolveBody = { candidate: p.candidate, as: 'unique', reason: 'new rule' };
    // Resolve has a body field for it.
    const resolve = await app.inject({ method: 'POST', url: url('resolve'), payload: resolveBody });
    expect(resolve.statusCode).toBe(409);
    expect(resolve.json().error).toMatchObject({ code: 'STALE_RECEIPT', message: expect.stringMatching(/is missing \(no complete receipt\)\. Refresh it: send "refresh": true in the request body$/), details: { fix: 'send "refresh": true in the request body' } });
    // Promote has none: the reconcile route.
    const promote = await app.inject({ method: 'POST', url: url('promote'), payload: { candidates: [p.candidate] } });
    expect(promote.json().error).toMatchObject({ code: 'STALE_RECEIPT', message: expect.stringMatching(/Refresh it: POST \/api\/knowledge\/review\/task-1\/reconcile$/) });
    // A receipt that does not read, in the review.
    expect((await app.inject({ method: 'POST', url: url('reconcile') })).statusCode).toBe(200);
    const receipt = join(p.dir, '.workflow', 'sessions', 'task-1', 'knowledge-reconciliation.json');
    writeFileSync(receipt, 'not json\n');
    const review = await app.inject({ method: 'GET', url: '/api/knowledge/review/task-1?projectId=P1' });
    expect(review.json().sources[0]).toMatchObject({ receipt: 'missing', error: `${receipt}: not valid JSON (line 1, column 1); rebuild it: POST /api/knowledge/review/task-1/reconcile.` });
    for (const r of [resolve, promote, review]) expect(r.body).not.toContain('--refresh');
    // Doing as told works.
    const done = await app.inject({ method: 'POST', url: url('resolve'), payload: { ...resolveBody, refresh: true } });
    expect(done.statusCode).toBe(200);
    expect(done.json().resolution).toMatchObject({ candidate_id: p.candidate, disposition: 'unique' });
  });

  it('refuses bad input with the field named, and changes nothing', async () => {
    const p = staged();
    const { app } = await serve({ P1: p.dir });
    const ledger = () => readFileSync(join(p.dir, '.workflow', 'sessions', 'task-1', 'knowledge-delta.json'), 'utf8');
    const before = ledger();
    const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const r = await app.inject({ method, url, ...(payload ? { payload } : {}) });
      return { status: r.statusCode, code: r.json().error?.code as string, message: r.json().error?.message as string };
    };
    expect(await call('GET', '/api/knowledge/review')).toMatchObject({ status: 400, code: 'BAD_INPUT', message: expect.stringMatching(/projectId/) });
    expect(await call('GET', '/api/knowledge/review?projectId=nope')).toMatchObject({ status: 404, code: 'UNKNOWN_PROJECT' });
    // Confinement: a path is never accepted in place of a registered project.
    expect(await call('GET', `/api/knowledge/review?projectId=P1&root=${encodeURIComponent('/etc')}`)).toMatchObject({ status: 400, message: expect.stringMatching(/root/) });
    expect(await call('GET', '/api/knowledge/review/..%2F..%2Fetc?projectId=P1')).toMatchObject({ status: 400, message: expect.stringMatching(/sessionId/) });
    expect(await call('GET', '/api/knowledge/review/no-such?projectId=P1')).toMatchObject({ status: 404, code: 'UNKNOWN_SESSION' });
    expect(await call('POST', '/api/knowledge/review/no-such/reconcile?projectId=P1')).toMatchObject({ status: 404, code: 'UNKNOWN_SESSION' });
    expect(await call('POST', '/api/knowledge/review/Bad_Id/reconcile?projectId=P1')).toMatchObject({ status: 400, message: expect.stringMatching(/sessionId/) });
    expect(await call('POST', '/api/knowledge/review/no-such/promote?projectId=P1', { all: true })).toMatchObject({ status: 404, code: 'UNKNOWN_SESSION' });
    // Not reconciled yet: promotion fails closed.
    expect(await call('POST', '/api/knowledge/review/task-1/promote?projectId=P1', { candidates: [p.candidate] })).toMatchObject({ status: 409, code: 'STALE_RECEIPT' });
    const resolve = (body: object) => call('POST', '/api/knowledge/review/task-1/resolve?projectId=P1', body);
    expect(await resolve({ candidate: p.candidate, as: 'maybe', reason: 'x' })).toMatchObject({ status: 400, message: expect.stringMatching(/as:/) });
    expect(await resolve({ candidate: p.candidate, as: 'unique', reason: '   ' })).toMatchObject({ status: 400, message: expect.stringMatching(/reason: must say why/) });
    expect(await resolve({ candidate: p.candidate, as: 'duplicate', reason: 'same' })).toMatchObject({ status: 400, message: expect.stringMatching(/target: needs a target/) });
    expect(await resolve({ candidate: 'KDC-zz', as: 'unique', reason: 'x' })).toMatchObject({ status: 400, message: expect.stringMatching(/candidate: must be a candidate id/) });
    expect(await resolve({ candidate: 'KDC-0123456789abcdef', as: 'unique', reason: 'x', refresh: true })).toMatchObject({ status: 400, message: expect.stringMatching(/not in session task-1/) });
    expect(await resolve({ candidate: p.candidate, as: 'unique', reason: 'x', extra: 1 })).toMatchObject({ status: 400, message: expect.stringMatching(/extra/) });
    expect(await resolve({ candidate: p.candidate, as: 'related', target: 'S-nope', reason: 'x', refresh: true })).toMatchObject({ status: 404, code: 'UNKNOWN_KNOWLEDGE_ID' });
    const promote = (body: object) => call('POST', '/api/knowledge/review/task-1/promote?projectId=P1', body);
    expect(await promote({})).toMatchObject({ status: 400, message: expect.stringContaining('give {"candidates": ["KDC-<16 hex>", …]} (1 to 100 ids) or {"all": true}') });
    expect(await promote({ candidates: [] })).toMatchObject({ status: 400 });
    expect(await promote({ all: false })).toMatchObject({ status: 400 });
    expect(await promote({ candidates: ['../x'] })).toMatchObject({ status: 400, message: expect.stringMatching(/candidate id/) });
    expect(await call('GET', '/api/knowledge/audit?projectId=P1&scope=everything')).toMatchObject({ status: 400, message: expect.stringMatching(/scope/) });
    expect(await call('GET', '/api/knowledge/audit?projectId=P1&apply=true')).toMatchObject({ status: 400, message: expect.stringMatching(/apply/) });
    // The refused calls left the candidate pending and unpromoted (and their refresh never ran).
    expect(JSON.parse(ledger()).candidates).toEqual(JSON.parse(before).candidates);
    expect(readdirSync(join(p.dir, '.workflow', 'specs'))).toEqual(['coding-conventions.md']);
  });

  it('a corrupt file on disk answers 500 CORRUPT_FILE naming it (not a 400: the request was fine); the queue shows it on that session only', async () => {
    const p = staged();
    createSession(p.root, 'task-2', 'still fine');
    const { app } = await serve({ P1: p.dir });
    const file = join(p.dir, '.workflow', 'sessions', 'task-1', 'knowledge-delta.json');
    writeFileSync(file, '{"schema_version": ');
    const session = join(p.dir, '.workflow', 'sessions', 'task-1', 'session.json');
    const good = readFileSync(session, 'utf8');
    writeFileSync(session, good.slice(0, 20));
    const one = await app.inject({ method: 'GET', url: '/api/knowledge/review/task-1?projectId=P1' });
    expect(one.statusCode).toBe(500);
    expect(one.json().error).toMatchObject({ code: 'CORRUPT_FILE', message: expect.stringContaining(`${session}: not valid JSON`) });
    writeFileSync(session, good);
    const queue = await app.inject({ method: 'GET', url: '/api/knowledge/review?projectId=P1' });
    expect(queue.statusCode).toBe(200);
    const bySession = Object.fromEntries(queue.json().sessions.map((s: { session_id: string }) => [s.session_id, s]));
    expect(bySession['task-2'].review).toMatchObject({ session_id: 'task-2' });
    expect(bySession['task-1'].review.sources[0]).toMatchObject({ receipt: 'missing', error: expect.stringContaining(`${file}: not valid JSON`) });
    const promote = await app.inject({ method: 'POST', url: '/api/knowledge/review/task-1/promote?projectId=P1', payload: { all: true } });
    // --all skips the unreadable source and says so (seed 000 §11.1); nothing is promoted from it.
    expect(promote.statusCode).toBe(200);
    expect(promote.json()).toMatchObject({ promoted: [], warnings: [expect.stringMatching(/session: skipped/)] });
    expect(readFileSync(file, 'utf8')).toBe('{"schema_version": ');
  });

  it('the queue names each session whose session.json does not read (file and why) and still lists the rest', async () => {
    const p = staged();
    const sessions = join(p.dir, '.workflow', 'sessions');
    createSession(p.root, 'task-2', 'cut short');
    const cut = join(sessions, 'task-2', 'session.json');
    writeFileSync(cut, readFileSync(cut, 'utf8').slice(0, 20));
    mkdirSync(join(sessions, 'task-3'));
    const { app } = await serve({ P1: p.dir });
    const queue = await app.inject({ method: 'GET', url: '/api/knowledge/review?projectId=P1' });
    expect(queue.statusCode).toBe(200);
    expect(queue.json().sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['task-1']);
    expect(queue.json().unreadable).toEqual([
      { session_id: 'task-2', file: cut, error: expect.stringContaining(`${cut}: not valid JSON (`) },
      { session_id: 'task-3', file: join(sessions, 'task-3', 'session.json'), error: `${join(sessions, 'task-3', 'session.json')} is missing.` },
    ]);
  });

  it('let the read routes name a project instead of a path', async () => {
    const p = staged();
    const { app } = await serve({ P1: p.dir });
    const byProject = await app.inject({ method: 'GET', url: '/api/knowledge/search?q=retry%20backoff&projectId=P1&readOnlyProbe=true' });
    expect(byProject.statusCode).toBe(200);
    const byPath = await app.inject({ method: 'GET', url: `/api/knowledge/search?q=retry%20backoff&root=${encodeURIComponent(p.dir)}&readOnlyProbe=true` });
    expect(byProject.json().results.map((r: { id: string }) => r.id)).toEqual(byPath.json().results.map((r: { id: string }) => r.id));
    expect(byProject.json().results.length).toBeGreaterThan(0);
    const entry = await app.inject({ method: 'GET', url: '/api/knowledge/entries/S-20260102-bbbb?projectId=P1' });
    expect(entry.json()).toMatchObject({ sid: 'S-20260102-bbbb', title: 'Retry budget' });
    const both = await app.inject({ method: 'GET', url: `/api/knowledge/search?q=x&projectId=P1&root=${encodeURIComponent(p.dir)}` });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.message).toMatch(/projectId or root, not both/);
    expect((await app.inject({ method: 'GET', url: '/api/knowledge/entries?projectId=nope' })).json().error.code).toBe('UNKNOWN_PROJECT');
  });

  it('are not registered without a project resolver (a path-only caller gets 404)', async () => {
    const pool = createKnowledgePool({ env: process.env });
    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await app.register(knowledgeRoutes, { pool });
    open.push({ app, pool });
    expect((await app.inject({ method: 'GET', url: '/api/knowledge/review?projectId=P1' })).statusCode).toBe(404);
  });
});
