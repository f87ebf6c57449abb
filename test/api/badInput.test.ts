/**
 * Bad input a fuzz of the API found answered wrongly, through the real daemon
 * (app.inject): each is refused with a 4xx that names what was wrong, and
 * nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardUnavailableRoutes } from '../../src/api/web.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';

describe('API refusals of bad input', () => {
  let d: TestDaemon;
  let projectId: string;
  let taskId: string;
  beforeAll(async () => {
    // The board's catch-all GET route, as `maestro serve` has it (without building the board): it answered an unrouted GET.
    d = await startTestDaemon({}, { noOrchestrator: true, plugins: [(app) => boardUnavailableRoutes(app, 'not built in this suite')] });
    projectId = (await d.store.projects.create({ name: 'bad-input', repoPath: makeRepo() })).id;
    taskId = (await d.store.tasks.create({ projectId, title: 'target' })).id;
    // The daemon opens a project's knowledge index on its first read and keeps it until it stops: open it here, the suite's.
    expect((await d.app.inject({ method: 'GET', url: `/api/knowledge/health?projectId=${projectId}` })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await d.stop();
    removeTempDirs();
  });

  /** `raw`: the body as JSON text, so it can hold escapes JSON.stringify would never write. */
  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, raw?: string) => {
    const res = await d.app.inject({ method, url, ...(raw === undefined ? { headers: { 'x-maestro-client': 'test' } } : { payload: raw, headers: { 'content-type': 'application/json' } }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  };

  it('refuses a lone UTF-16 surrogate in any text of a body, naming the field, instead of storing U+FFFD', async () => {
    const before = await d.store.tasks.list({ projectId });
    const title = await call('POST', '/api/tasks', `{"projectId":"${projectId}","title":"half \\ud800 a pair"}`);
    expect(title.status).toBe(400);
    expect(title.body.error).toMatchObject({ code: 'BAD_INPUT', message: 'Invalid body: title: holds a lone UTF-16 surrogate (\\ud800 at character 5), which is no character; send valid Unicode text.' });
    const path = await call('PATCH', `/api/tasks/${taskId}`, `{"ownedFiles":["src/a.ts","src/\\udc00.ts"]}`);
    expect(path.status).toBe(400);
    expect(path.body.error.message).toBe('Invalid body: ownedFiles.1: holds a lone UTF-16 surrogate (\\udc00 at character 4), which is no character; send valid Unicode text.');
    const reason = await call('POST', `/api/tasks/${taskId}/cancel`, `{"reason":"\\udfff\\ud800"}`);
    expect(reason.status).toBe(400);
    expect(reason.body.error.message).toMatch(/^Invalid body: reason: holds a lone UTF-16 surrogate \(\\udfff at character 0\)/);
    expect(await d.store.tasks.list({ projectId })).toEqual(before);
    expect((await d.store.tasks.get(taskId)).ownedFiles).toEqual([]);
    // A whole pair is a character like any other, kept as sent.
    const pair = await call('POST', '/api/tasks', `{"projectId":"${projectId}","title":"ship it \\ud83d\\ude80"}`);
    expect(pair.status).toBe(201);
    expect(pair.body.task.title).toBe('ship it 🚀');
  });

  it('refuses a __proto__ or constructor.prototype key naming it, not calling valid JSON invalid; creates nothing', async () => {
    const before = await d.store.tasks.list({ projectId });
    const proto = await call('POST', '/api/tasks', `{"projectId":"${projectId}","title":"x","__proto__":{"admin":true}}`);
    expect(proto.status).toBe(400);
    expect(proto.body.error).toMatchObject({ code: 'BAD_INPUT', message: 'Invalid body: __proto__: "__proto__" is a key the API refuses, though the JSON is valid: merged into an object, it would change the prototype of every object. Rename or remove it.' });
    const nested = await call('PATCH', `/api/tasks/${taskId}`, '{"ownedFiles":[{"constructor":{"prototype":{"admin":true}}}]}');
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toBe('Invalid body: ownedFiles.0.constructor.prototype: "constructor.prototype" is a key the API refuses, though the JSON is valid: merged into an object, it would change the prototype of every object. Rename or remove it.');
    // Invalid JSON is still said to be that, with where.
    expect((await call('POST', '/api/tasks', '{"title":')).body.error.message).toMatch(/^The body is not valid JSON: /);
    expect(await d.store.tasks.list({ projectId })).toEqual(before);
  });

  it("refuses an escape sequence in who acted, as the approvals list would print it", async () => {
    const r = await call('POST', `/api/tasks/${taskId}/cancel`, JSON.stringify({ who: 'alice \u001b[31m(human)' }));
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('Invalid body: who: must be one line without control characters (NUL, line breaks, tabs, escapes)');
    expect((await d.store.tasks.get(taskId)).status).not.toBe('cancelled');
  });

  it("refuses the daemon's own names as who approved or rejected ('auto', 'auto-approve'), so no person's decision reads as automatic", async () => {
    const gated = await d.store.tasks.create({ projectId, title: 'at a gate' });
    for (const s of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(gated.id, s);
    for (const [url, who] of [['approve', 'auto'], ['approve', 'Auto Approve'], ['reject', 'auto-approve']]) {
      const r = await call('POST', `/api/tasks/${gated.id}/${url}`, JSON.stringify({ who, reason: 'looks fine' }));
      expect(r.status, `${url} as ${who}`).toBe(400);
      expect(r.body.error.message).toBe(`Invalid body: who: "${who}" is the name the daemon signs its automatic approvals with; name the person or tool that decides (or leave who out: "human")`);
    }
    expect(await d.store.tasks.get(gated.id)).toMatchObject({ status: 'plan_review', approvals: [] });
    // A name that only starts like one is a name like any other.
    const ok = await call('POST', `/api/tasks/${gated.id}/approve`, JSON.stringify({ who: 'automation-bot' }));
    expect(ok.status).toBe(200);
    expect(ok.body.task.approvals).toMatchObject([{ gate: 'plan_review', decision: 'approve', who: 'automation-bot' }]);
  });

  it('refuses a line break or an escape sequence in who acted on a project, as on a task, and changes nothing', async () => {
    const repo = makeRepo();
    const events = async () => (await d.store.events.list({ projectId, limit: 1000 })).events.length;
    const before = { project: await d.store.projects.get(projectId), events: await events(), projects: await d.store.projects.list() };
    const who = JSON.stringify('evil\u001b[2J\nline2');
    for (const [method, url, body] of [
      ['POST', `/api/projects/${projectId}/archive`, `{"who":${who}}`],
      ['POST', `/api/projects/${projectId}/restore`, `{"who":${who}}`],
      ['PATCH', `/api/projects/${projectId}`, `{"config":{"keepBranches":true},"who":${who}}`],
      ['POST', '/api/projects', `{"name":"by-evil","repoPath":${JSON.stringify(repo)},"who":${who}}`],
    ] as const) {
      const r = await call(method, url, body);
      expect([url, r.status]).toEqual([url, 400]);
      expect(r.body.error.message, url).toBe('Invalid body: who: must be one line without control characters (NUL, line breaks, tabs, escapes)');
    }
    expect({ project: await d.store.projects.get(projectId), events: await events(), projects: await d.store.projects.list() }).toEqual(before);
  });

  it('refuses a project name with a line break or an escape sequence, as a task title, and registers nothing', async () => {
    const before = await d.store.projects.list();
    for (const name of ['two\nlines', 'red \u001b[31mname']) {
      const r = await call('POST', '/api/projects', JSON.stringify({ name, repoPath: makeRepo() }));
      expect(r.status).toBe(400);
      expect(r.body.error.message).toBe('Invalid body: name: must be one line without control characters (NUL, line breaks, tabs, escapes)');
    }
    expect(await d.store.projects.list()).toEqual(before);
  });

  it('takes numbers in a query as plain decimal digits only, naming the parameter and what it expects', async () => {
    expect((await call('GET', '/api/tasks?limit=16')).status).toBe(200);
    for (const [url, message] of [
      ['/api/tasks?limit=0x10', 'Invalid query: limit: must be a decimal integer from 1 to 5000'],
      ['/api/tasks?offset=1e3', 'Invalid query: offset: must be a decimal integer from 0 to 10000000'],
      ['/api/tasks?limit=%2016', 'Invalid query: limit: must be a decimal integer from 1 to 5000'],
      ['/api/tasks?limit=5001', 'Invalid query: limit: must be a decimal integer from 1 to 5000'],
      ['/api/events?after=0b1', 'Invalid query: after: must be a decimal integer from 0 to 9007199254740991'],
      ['/api/runs?limit=16.0', 'Invalid query: limit: must be a decimal integer from 1 to 5000'],
      ['/api/approvals?limit=-1', 'Invalid query: limit: must be a decimal integer from 1 to 1000'],
      ['/api/scheduler/decisions?limit=0x10', 'Invalid query: limit: must be a decimal integer from 1 to 1000'],
      [`/api/tasks/${taskId}/transcript?q=x&limit=0x10`, 'Invalid query: limit: must be a decimal integer from 1 to 10000'],
      [`/api/tasks/${taskId}/checks?version=0x1`, 'Invalid query: version: must be a decimal integer from 1 to 100000'],
      [`/api/knowledge/search?projectId=${projectId}&q=x&limit=0x10`, 'Invalid query: limit: must be a decimal integer'],
    ] as const) {
      const res = await call('GET', url);
      expect([url, res.status, res.body.error.code]).toEqual([url, 400, 'BAD_INPUT']);
      expect(res.body.error.message, url).toBe(message);
    }
  });

  it('takes a knowledge flag as true or false (1 or 0) only, naming the flag', async () => {
    const base = `/api/knowledge/entries?projectId=${projectId}`;
    expect((await call('GET', `${base}&includeDeprecated=true&global=0`)).status).toBe(200);
    for (const [url, flag] of [
      [`${base}&includeDeprecated=banana`, 'includeDeprecated'],
      [`${base}&global=yes`, 'global'],
      [`/api/knowledge/entries/some-id?projectId=${projectId}&includeDeprecated=TRUE`, 'includeDeprecated'],
      [`/api/knowledge/health?projectId=${projectId}&global=on`, 'global'],
      [`/api/knowledge/search?projectId=${projectId}&q=x&fresh=banana`, 'fresh'],
    ] as const) {
      const res = await call('GET', url);
      expect([url, res.status, res.body.error.code]).toEqual([url, 400, 'BAD_INPUT']);
      expect(res.body.error.message, url).toBe(`Invalid query: ${flag}: must be true or false (or 1 or 0)`);
    }
  });

  it('refuses a misspelt or unknown key, and a type that is no knowledge type, on the knowledge routes and observer decisions, naming it', async () => {
    const at = (route: string, query: string) => `/api/knowledge/${route}?projectId=${projectId}&${query}`;
    // What the board sends (web/src/api/knowledge.ts) and the CLI's search through the daemon (toQueryString) still pass.
    for (const url of [at('search', 'q=x&limit=30&type=knowhow&category=release'), at('search', 'q=x&kg=true&type=codegraph&tag=t&workspace=local&diversity=off&readOnlyProbe=false&allProjects=false&fresh=true&global=false'), at('entries', 'type=tip&keyword=retry&includeDeprecated=true'), `/api/knowledge/entries/some-id?projectId=${projectId}&includeDeprecated=true`]) {
      const res = await call('GET', url);
      expect([url, res.status]).not.toEqual([url, 400]);
    }
    const types = 'spec, knowhow, wiki, session, tip, template, recipe, reference, decision, asset, blueprint, document, context, entity, summary';
    for (const [url, message] of [
      [at('search', 'q=x&bogus=1&limt=5'), 'Invalid query: Unrecognized keys: "bogus", "limt"'],
      [at('entries', 'type=banana'), `Invalid query: type: "banana" is no knowledge type; give one of ${types}`],
      [at('search', 'q=x&type=banana'), `Invalid query: type: "banana" is no knowledge type; give one of ${types}, code, codegraph`],
      [at('entries', 'keyword=two%0Alines'), 'Invalid query: keyword: must be one line without control characters (NUL, line breaks, tabs, escapes)'],
      [at('entries', 'limit=5'), 'Invalid query: Unrecognized key: "limit"'],
      [`/api/knowledge/entries/some-id?projectId=${projectId}&type=spec`, 'Invalid query: Unrecognized key: "type"'],
      [at('health', 'kind=spec&knd=wiki'), 'Invalid query: Unrecognized key: "knd"'],
    ] as const) {
      const res = await call('GET', url);
      expect([url, res.status, res.body.error.code]).toEqual([url, 400, 'BAD_INPUT']);
      expect(res.body.error.message, url).toBe(message);
    }
    const decided = await call('POST', '/api/observer/proposals/P-20261201T000000Z-C001/accept', JSON.stringify({ nte: 'typo' }));
    expect(decided.status).toBe(400);
    expect(decided.body.error.message).toBe('Invalid body: Unrecognized key: "nte"');
  });

  it("answers 404 for a transcript asked with a run of another task, and keeps the task's own", async () => {
    const other = await d.store.tasks.create({ projectId, title: 'other' });
    const foreign = await d.store.runs.create({ taskId: other.id, kind: 'execute', model: null, traceId: 'trace-foreign', attempt: 1 });
    const own = await d.store.runs.create({ taskId, kind: 'execute', model: null, traceId: 'trace-own', attempt: 1 });
    for (const query of ['', '&q=needle']) {
      const res = await call('GET', `/api/tasks/${taskId}/transcript?runId=${foreign.id}${query}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'UNKNOWN_RUN', message: `Run ${foreign.id} is not one of task ${taskId}'s runs; GET /api/tasks/${taskId} lists them.` });
    }
    expect((await call('GET', `/api/tasks/${taskId}/transcript?runId=nope`)).status).toBe(404);
    const mine = await call('GET', `/api/tasks/${taskId}/transcript?runId=${own.id}&q=needle`);
    expect(mine).toEqual({ status: 200, body: { runId: own.id, matches: [] } });
  });

  it('answers an over-long id in a path with a 400 saying how long an id may be, on every route with one', async () => {
    const long = 'x'.repeat(201);
    const tooLong = (name: string) => `Invalid path parameters: ${name}: is too long; an id is at most 200 characters.`;
    for (const [method, url, name] of [
      ['GET', `/api/tasks/${long}`, 'id'],
      ['PATCH', `/api/tasks/${long}`, 'id'],
      ['POST', `/api/tasks/${long}/retry`, 'id'],
      ['GET', `/api/tasks/${long}/transcript`, 'id'],
      ['GET', `/api/tasks/${long}/diff`, 'id'],
      ['GET', `/api/tasks/${long}/stream`, 'taskId'],
      ['GET', `/api/projects/${long}`, 'id'],
      ['GET', `/api/runs/${long}`, 'id'],
      ['GET', `/api/traces/${long}`, 'traceId'],
      ['POST', `/api/observer/proposals/${long}/dismiss`, 'id'],
      ['GET', `/api/tasks/${'x'.repeat(5000)}`, 'id'],
    ] as const) {
      const res = await call(method, url, method === 'PATCH' ? '{}' : undefined);
      expect([url.slice(0, 40), res.status, res.body.error.code]).toEqual([url.slice(0, 40), 400, 'BAD_INPUT']);
      expect(res.body.error.message).toBe(tooLong(name));
    }
    // Up to the limit an id is looked up as any other, past Fastify's default of 100 characters too (its route matched nothing there).
    for (const id of ['x'.repeat(101), 'x'.repeat(200)]) {
      for (const [method, url] of [['GET', `/api/tasks/${id}`], ['POST', `/api/tasks/${id}/retry`]] as const) {
        const unknown = await call(method, url);
        expect([url.slice(0, 40), unknown.status, unknown.body.error.code]).toEqual([url.slice(0, 40), 404, 'UNKNOWN_TASK']);
      }
      expect((await call('GET', `/api/runs/${id}`)).body.error.code).toBe('UNKNOWN_RUN');
    }
    // An observer session id is a folder name, 128 characters at most.
    expect((await call('GET', `/api/observer/sessions/${'s'.repeat(128)}`)).body.error.code).toBe('UNKNOWN_SESSION');
    const session = await call('GET', `/api/observer/sessions/${'s'.repeat(129)}`);
    expect(session).toMatchObject({ status: 400, body: { error: { code: 'BAD_INPUT', message: 'Invalid path parameters: id: is too long; a session id is at most 128 characters.' } } });
  });
});
