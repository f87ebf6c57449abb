/**
 * Bad input at the edges (issue 13, item 10), over a real socket: whatever
 * Fastify or Node's HTTP parser refuse answers in the documented
 * `{"error":{"code","message"}}` shape and changes nothing; and the token
 * file the daemon keeps in its home.
 */
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { expectRefusal, send, snapshot } from './raw.js';

/** Bytes straight onto the socket, for requests node's client will not send; returns what came back. */
function rawSocket(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    let out = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => (out += c));
    s.on('close', () => resolve(out));
    s.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(out) : reject(err)));
  });
}

function parseRaw(text: string): { status: number; body: string; headers: Record<string, string> } {
  const [head, ...rest] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1]), body: rest.join('\r\n\r\n'), headers: {} };
}

describe('bad input at the edges', () => {
  let d: TestDaemon;
  let taskId: string;
  let projectId: string;
  let auth: Record<string, string>;
  beforeAll(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    projectId = (await d.store.projects.create({ name: 'edges', repoPath: makeRepo() })).id;
    taskId = (await d.store.tasks.create({ projectId, title: 'unchanged' })).id;
    auth = { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await d.stop();
    removeTempDirs();
  });

  it('refuses JSON nested 5,000 deep with a 400 naming the limit, on every kind of body', async () => {
    const before = await snapshot(d);
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const deepObject = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const bodies = [
      ['POST', '/api/tasks', `{"projectId":"${projectId}","title":"x","extra":${deep}}`],
      ['PATCH', `/api/projects/${projectId}`, `{"config":${deepObject}}`],
      ['PATCH', `/api/tasks/${taskId}`, deep],
      ['POST', `/api/tasks/${taskId}/cancel`, deepObject],
    ] as const;
    for (const [method, path, body] of bodies) {
      const message = expectRefusal(await send(d.port, { method, path, headers: auth, body }), 400, 'BAD_INPUT', `${method} ${path} nested 5,000 deep`);
      expect(message).toMatch(/deeper than 64 levels/);
    }
    expect(await snapshot(d)).toEqual(before);
    // A config nested a sane depth is still taken.
    const nested = `${'{"a":'.repeat(20)}1${'}'.repeat(20)}`;
    const sane = await send(d.port, { method: 'PATCH', path: `/api/projects/${projectId}`, headers: auth, body: `{"config":{"extra":${nested}}}` });
    // Past the parser, the settings schema answers (it knows no "extra"), not the depth limit.
    expect(sane.status).toBe(400);
    expect(sane.body).not.toMatch(/deeper than/);
    expect(sane.body).toMatch(/config: Unrecognized key/);
    const valid = '{"config":{"provider":{"kind":"command","command":["my-agent","{prompt}"],"env":{"K":"v"}}}}';
    expect((await send(d.port, { method: 'PATCH', path: `/api/projects/${projectId}`, headers: auth, body: valid })).status).toBe(200);
  });

  it('refuses a body that is not JSON saying where, and a JSON null where an object goes, changing nothing', async () => {
    const before = await snapshot(d);
    const broken = expectRefusal(await send(d.port, { method: 'PATCH', path: `/api/tasks/${taskId}`, headers: auth, body: '{"title": "x",}' }), 400, 'BAD_INPUT', 'a trailing comma');
    expect(broken).toMatch(/^The body is not valid JSON: .*position 14/);
    // `null` is not "no body": an approve, a cancel or an archive sent it ran as if it were `{}`.
    for (const [method, path] of [['POST', `/api/tasks/${taskId}/cancel`], ['POST', `/api/projects/${projectId}/archive`], ['PATCH', `/api/tasks/${taskId}`]] as const) {
      expect(expectRefusal(await send(d.port, { method, path, headers: auth, body: 'null' }), 400, 'BAD_INPUT', `${method} ${path} with null`)).toMatch(/body/);
    }
    expect(await snapshot(d)).toEqual(before); // no body at all is still a bodyless POST: the next test
  });

  it("answers Fastify's own refusals in the documented shape", async () => {
    const before = await snapshot(d);
    expectRefusal(await send(d.port, { path: '/api/tasks/%E0%A4%A', headers: auth }), 400, 'BAD_INPUT', 'a bad percent-encoding');
    const long = expectRefusal(await send(d.port, { path: `/api/tasks/${'x'.repeat(300)}`, headers: auth }), 400, 'BAD_INPUT', 'a path parameter too long');
    expect(long).toBe('Invalid path parameters: id: is too long; an id is at most 200 characters.');
    expectRefusal(await send(d.port, { method: 'POST', path: '/api/tasks', headers: auth, body: '{"title":' }), 400, 'BAD_INPUT', 'malformed JSON');
    expectRefusal(await send(d.port, { method: 'POST', path: '/api/tasks', headers: auth, body: `{"projectId":"${projectId}","title":"x","__proto__":{"admin":true}}` }), 400, 'BAD_INPUT', 'a __proto__ key');
    expectRefusal(await send(d.port, { method: 'POST', path: '/api/tasks', headers: auth, body: JSON.stringify({ projectId, title: 'x', pad: 'y'.repeat(3 * 1024 * 1024) }) }), 413, 'BAD_INPUT', 'a body over 2 MB');
    expectRefusal(await send(d.port, { method: 'POST', path: '/api/tasks', headers: { ...auth, 'content-type': 'application/xml' }, body: '<task/>' }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'an XML body');
    expectRefusal(await send(d.port, { method: 'PROPFIND', path: '/api/tasks', headers: auth }), 404, 'NOT_FOUND', 'a method no route takes');
    // What Node's parser refuses before Fastify sees it: an unknown method, a URL past the header limit.
    const unknown = parseRaw(await rawSocket(d.port, `FOO /api/tasks HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\n\r\n`));
    expectRefusal({ status: unknown.status, headers: {}, body: unknown.body }, 400, 'BAD_INPUT', 'an unknown method');
    expect(unknown.body).toMatch(/Unknown HTTP method/);
    const pastLimit = parseRaw(await rawSocket(d.port, `GET /api/tasks?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\n\r\n`));
    expectRefusal({ status: pastLimit.status, headers: {}, body: pastLimit.body }, 431, 'BAD_INPUT', 'a URL past the header limit');
    expect(await snapshot(d)).toEqual(before);
  });

  it('takes an empty body with the JSON content type as no body', async () => {
    expect((await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/cancel`, headers: auth })).status).toBe(200);
    expect((await d.store.tasks.get(taskId)).status).toBe('cancelled');
  });
});

describe('the token file', () => {
  afterAll(() => removeTempDirs());

  it('is created 0600 on the first start, reused by the next, and replaced when other users could read it', async () => {
    const home = tempDir('maestro-home-');
    const path = join(home, 'token');
    const first = await startTestDaemon({ home }, { noOrchestrator: true });
    await first.stop();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').trim()).toBe(first.token);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const second = await startTestDaemon({ home }, { noOrchestrator: true });
    await second.stop();
    expect(second.token).toBe(first.token);

    // Readable by others: it may have been read already, so a fresh token replaces it.
    chmodSync(path, 0o644);
    const third = await startTestDaemon({ home }, { noOrchestrator: true });
    await third.stop();
    expect(third.token).not.toBe(first.token);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').trim()).toBe(third.token);
    expect(third.logs.join('')).toMatch(/readable by other users \(mode 644\); replaced it with a new token/);

    // A file that holds no token (empty, truncated) is replaced too.
    writeFileSync(path, '', { mode: 0o600 });
    const fourth = await startTestDaemon({ home }, { noOrchestrator: true });
    await fourth.stop();
    expect(fourth.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(path, 'utf8').trim()).toBe(fourth.token);
  });

  it('is not used when MAESTRO_TOKEN (config.token) is given', async () => {
    const home = tempDir('maestro-home-');
    const d = await startTestDaemon({ home, token: 'given-token-12345' }, { noOrchestrator: true });
    try {
      expect(d.token).toBe('given-token-12345');
      expect((await send(d.port, { path: '/api/tasks', headers: { authorization: 'Bearer given-token-12345' } })).status).toBe(200);
    } finally {
      await d.stop();
    }
  });
});
describe('the home', () => {
  afterAll(() => removeTempDirs());

  it('is created 0700, and one other users can enter is closed to them with a warning', async () => {
    const home = join(tempDir('maestro-parent-'), 'home');
    const first = await startTestDaemon({ home }, { noOrchestrator: true });
    await first.stop();
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(first.logs.join('')).not.toContain('open to other users');

    chmodSync(home, 0o755);
    const second = await startTestDaemon({ home }, { noOrchestrator: true });
    await second.stop();
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(second.logs.join('')).toContain(`The Maestro home ${home} was open to other users (mode 755)`);
  });
});

