/**
 * The daemon's front door over a real socket (issue 13, items 1–3): a
 * DNS-rebinding Host, a foreign Origin, a "simple" cross-site body, a missing
 * or wrong token — each refused on the API, SSE and the WebSocket upgrade, in
 * the documented shape, changing nothing; and the ways in that must keep
 * working: the CLI with its home, the board's link, the settings
 * that open the door on purpose.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webRoutes } from '../../src/api/web.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { readFileSync } from 'node:fs';
import { trackResource } from '../../src/lib/resources.js';
import { cleanEnv, cli, cliJson, startCli } from '../cli/helpers.js';
import { expectRefusal, routesOf, send, snapshot, upgrade, type RawRequest } from './raw.js';
import { budget } from '../helpers/budget.js';

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function fakeDist(): string {
  const dist = tempDir('maestro-dist-');
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>board</title>');
  writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
  return dist;
}

describe('the API front door', () => {
  let d: TestDaemon;
  let taskId: string;
  let projectId: string;
  let bearer: Record<string, string>;
  const own = () => `http://127.0.0.1:${d.port}`;

  beforeAll(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true, plugins: [(app) => webRoutes(app, { dist: fakeDist() })] });
    projectId = (await d.store.projects.create({ name: 'guarded', repoPath: makeRepo() })).id;
    taskId = (await d.store.tasks.create({ projectId, title: 'keep me ready' })).id;
    bearer = { authorization: `Bearer ${d.token}` };
  });
  afterAll(async () => {
    await d.stop();
    removeTempDirs();
  });

  /** Every route that writes, with its path parameters filled in (a real task and project, so an accepted request would act). */
  const writes = () =>
    routesOf(d)
      .filter((r) => r.url.startsWith('/api') && !['GET', 'HEAD'].includes(r.method))
      .map((r) => ({ method: r.method, path: r.url.replace(':taskId', taskId).replace(':id', r.url.startsWith('/api/projects') ? projectId : taskId).replace(/:\w+/g, 'x') }));

  it('finds every state-changing route, the ones the issue names among them', () => {
    const names = writes().map((w) => `${w.method} ${w.path}`);
    expect(names).toEqual(expect.arrayContaining([`POST /api/tasks/${taskId}/cancel`, `POST /api/tasks/${taskId}/retry`, `POST /api/tasks/${taskId}/approve`, `PATCH /api/projects/${projectId}`, 'POST /api/tasks', 'POST /api/projects']));
  });

  it('refuses a rebinding Host on the API, SSE and the WebSocket upgrade; loopback names pass', async () => {
    const before = await snapshot(d);
    for (const host of [`evil.example:${d.port}`, 'evil.example', `localhost.evil.example:${d.port}`, `127.0.0.1.nip.io:${d.port}`, `[::2]:${d.port}`, `10.0.0.1:${d.port}`]) {
      const message = expectRefusal(await send(d.port, { path: '/api/tasks', headers: { ...bearer, host } }), 403, 'FORBIDDEN', `GET with Host ${host}`);
      expect(message).toMatch(/allowedHosts/);
      expectRefusal(await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/cancel`, headers: { ...bearer, host, origin: `http://${host}`, 'content-type': 'application/json' }, body: '{}' }), 403, 'FORBIDDEN', `cancel with Host ${host}`);
      expectRefusal(await send(d.port, { path: `/api/tasks/${taskId}/stream`, headers: { ...bearer, host } }), 403, 'FORBIDDEN', `SSE with Host ${host}`);
      expectRefusal(await upgrade(d.port, `/api/ws?token=${d.token}`, { host }), 403, 'FORBIDDEN', `WebSocket with Host ${host}`);
    }
    expect(await snapshot(d)).toEqual(before);
    expect((await d.store.tasks.get(taskId)).status).toBe('ready');
    for (const host of [`127.0.0.1:${d.port}`, `localhost:${d.port}`, `[::1]:${d.port}`, `LocalHost:${d.port}`, 'localhost:8000']) {
      expect([host, (await send(d.port, { path: '/api/tasks', headers: { ...bearer, host } })).status]).toEqual([host, 200]);
    }
    expect(await upgrade(d.port, `/api/ws?token=${d.token}`, { host: `localhost:${d.port}` })).toBe('upgraded');
  });

  it('refuses a foreign Origin on every state-changing route, SSE and the WebSocket, changing nothing', async () => {
    const before = await snapshot(d);
    const foreign = [`http://evil.example:${d.port}`, 'http://localhost:8000', `https://127.0.0.1:${d.port}.evil.example`, 'null', `http://127.0.0.1:${d.port + 1}`];
    for (const { method, path } of writes()) {
      for (const origin of foreign) {
        const message = expectRefusal(await send(d.port, { method, path, ...json({ reason: 'x' }), headers: { ...bearer, origin, 'content-type': 'application/json' } }), 403, 'FORBIDDEN', `${method} ${path} from ${origin}`);
        expect(message).toMatch(/allowedOrigins/);
      }
    }
    for (const origin of foreign) {
      expectRefusal(await send(d.port, { path: `/api/tasks/${taskId}/stream`, headers: { ...bearer, origin } }), 403, 'FORBIDDEN', `SSE from ${origin}`);
      expectRefusal(await upgrade(d.port, `/api/ws?token=${d.token}`, { origin }), 403, 'FORBIDDEN', `WebSocket from ${origin}`);
    }
    expect(await snapshot(d)).toEqual(before);
    // The board's own origin passes everywhere: the refusals above were the Origin's doing.
    expect((await send(d.port, { path: `/api/tasks/${taskId}/stream`, headers: { ...bearer, origin: own() } })).status).toBe(200);
    expect(await upgrade(d.port, `/api/ws?token=${d.token}`, { origin: own() })).toBe('upgraded');
    expect((await send(d.port, { method: 'PATCH', path: `/api/tasks/${taskId}`, ...json({ title: 'renamed by the board' }), headers: { ...bearer, origin: own(), 'content-type': 'application/json' } })).status).toBe(200);
    expect((await d.store.tasks.get(taskId)).title).toBe('renamed by the board');
  });

  it('takes writes as JSON only: text/plain, form posts and a bare bodyless POST are 415 and change nothing', async () => {
    const before = await snapshot(d);
    const simple: [string, Omit<RawRequest, 'path'>][] = [
      ['text/plain', { headers: { 'content-type': 'text/plain' }, body: '{"reason":"x"}' }],
      ['text/plain;charset=UTF-8', { headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: '{"reason":"x"}' }],
      ['a form post', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'reason=x' }],
      ['a multipart form', { headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: '--b\r\nContent-Disposition: form-data; name="reason"\r\n\r\nx\r\n--b--\r\n' }],
      ['a bodyless POST with no content type', { headers: { 'content-length': '0' } }],
      ['a bodyless text/plain POST', { headers: { 'content-type': 'text/plain', 'content-length': '0' } }],
    ];
    for (const { method, path } of writes()) {
      for (const [what, req] of simple) {
        expectRefusal(await send(d.port, { method, path, ...req, headers: { ...bearer, ...req.headers } }), 415, 'UNSUPPORTED_MEDIA_TYPE', `${method} ${path}: ${what}`);
      }
    }
    expect(await snapshot(d)).toEqual(before);
    // A bodyless POST goes through with the JSON content type or X-Maestro-Client (what the board and the CLI send).
    expect((await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/cancel`, headers: { ...bearer, 'content-type': 'application/json' } })).status).toBe(200);
    expect((await d.store.tasks.get(taskId)).status).toBe('cancelled');
    expect((await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/retry`, headers: { ...bearer, 'x-maestro-client': 'test', 'content-length': '0' } })).status).toBe(200);
    expect((await d.store.tasks.get(taskId)).status).toBe('ready');
  });

  it('asks for the token on every API route on loopback too, saying where it is', async () => {
    const before = await snapshot(d);
    const api = routesOf(d).filter((r) => r.url.startsWith('/api') && r.method !== 'HEAD');
    expect(api.length).toBeGreaterThan(20);
    const wrong = 'A'.repeat(d.token!.length);
    for (const { method, url } of [...api, { method: 'GET', url: '/api/no-such-route' }]) {
      const path = url.replace(/:\w+/g, method === 'PATCH' && url.startsWith('/api/projects') ? projectId : taskId);
      const body = method === 'GET' ? {} : json({ reason: 'x' });
      const what = `${method} ${path}`;
      const bare = await send(d.port, { method, path, ...body });
      expect(expectRefusal(bare, 401, 'UNAUTHORIZED', `${what} without a token`)).toContain('$MAESTRO_HOME/token');
      expect(bare.headers['www-authenticate']).toBe('Bearer realm="maestro"');
      for (const authorization of [`Bearer ${wrong}`, `Basic ${d.token}`, `Bearer`, `${d.token}`]) {
        expectRefusal(await send(d.port, { method, path, ...body, headers: { ...(body as RawRequest).headers, authorization } }), 401, 'UNAUTHORIZED', `${what} with "${authorization.replace(d.token!, '<token>')}"`);
      }
      // The cookie older boards kept the token in counts for nothing now, this daemon's or another's.
      for (const port of [d.port, d.port + 1]) expectRefusal(await send(d.port, { method, path, ...body, headers: { ...(body as RawRequest).headers, cookie: `maestro_token_${port}=${d.token}` } }), 401, 'UNAUTHORIZED', `${what} with the cookie of port ${port}`);
    }
    // ?token= is for EventSource and WebSocket (GETs): a write cannot carry it in its URL, nor any other read
    // (a token in a URL ends up in histories and proxy logs), not even beside a wrong header.
    expectRefusal(await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/cancel?token=${d.token}`, ...json({}) }), 401, 'UNAUTHORIZED', 'cancel with ?token=');
    for (const path of ['/api/projects', `/api/tasks/${taskId}`, '/api/health']) {
      expectRefusal(await send(d.port, { path: `${path}?token=${d.token}` }), 401, 'UNAUTHORIZED', `GET ${path} with ?token=`);
      expect((await send(d.port, { method: 'HEAD', path: `${path}?token=${d.token}` })).status, `HEAD ${path} with ?token=`).toBe(401);
    }
    expectRefusal(await send(d.port, { path: `/api/projects?token=${d.token}`, headers: { authorization: `Bearer ${wrong}` } }), 401, 'UNAUTHORIZED', 'a wrong header beside ?token=');
    expectRefusal(await send(d.port, { path: `/api/tasks/${taskId}/stream` }), 401, 'UNAUTHORIZED', 'SSE without a token');
    expectRefusal(await upgrade(d.port, '/api/ws'), 401, 'UNAUTHORIZED', 'WebSocket without a token');
    expectRefusal(await upgrade(d.port, `/api/ws?token=${wrong}`), 401, 'UNAUTHORIZED', 'WebSocket with a wrong token');
    expect(await snapshot(d)).toEqual(before);
    // The scheme is case-insensitive; EventSource and WebSocket may send ?token=.
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) expect((await send(d.port, { path: '/api/tasks', headers: { authorization: `${scheme} ${d.token}` } })).status).toBe(200);
    expect((await send(d.port, { path: `/api/tasks/${taskId}/stream?token=${d.token}` })).status).toBe(200);
    expect(await upgrade(d.port, `/api/ws?token=${d.token}`)).toBe('upgraded');
  });

  it('takes a board link with the token given twice as a link: every copy checked', async () => {
    const wrong = 'A'.repeat(d.token!.length);
    const twice = await send(d.port, { path: `/?token=${d.token}&lang=en&token=${d.token}` });
    expect(twice.status).toBe(200);
    expect(twice.body).toContain('<title>board</title>');
    expect(twice.headers['set-cookie']).toBeUndefined();
    for (const path of [`/?token=${d.token}&token=${wrong}`, `/?token=${wrong}&token=${d.token}`]) {
      const refused = await send(d.port, { path });
      expectRefusal(refused, 401, 'UNAUTHORIZED', path);
      expect(refused.body, path).not.toContain('<title>board</title>');
      expect(JSON.parse(refused.body).error.message, path).toMatch(/^This link gives a token 2 times, and not every one is this daemon's\./);
    }
  });

  it('serves the printed board link\'s page once its token is checked, sets no cookie (every port of the host is sent it), and clears the old one', async () => {
    expect(d.boardUrl).toBe(`${own()}/?token=${d.token}`);
    // The board's files are public; its data is not.
    expect((await send(d.port, { path: '/' })).status).toBe(200);
    expect((await send(d.port, { path: '/assets/index-abc123.js' })).status).toBe(200);
    expectRefusal(await send(d.port, { path: '/api/tasks' }), 401, 'UNAUTHORIZED', 'the board data without the token');

    // The page's own script keeps the token and drops it from the address bar (board.e2e.test.ts); no cache keeps the page.
    const page = await send(d.port, { path: `/?token=${d.token}&lang=en` });
    expect(page.status).toBe(200);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers.location).toBeUndefined();
    expect(page.body).toContain('<title>board</title>');
    // No other page may frame the board or learn its URL from a Referer.
    expect(page.headers).toMatchObject({ 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' });
    // Its own files and API only: no inline script but its own (none here), no image from elsewhere, no frame around it.
    expect(page.headers['content-security-policy']).toBe("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
    const authorization = `Bearer ${d.token}`;
    expect((await send(d.port, { path: '/api/tasks', headers: { authorization } })).headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");

    // The board as it signs in: reads and writes with the header from its own origin, SSE and the WebSocket with ?token=.
    expect((await send(d.port, { path: '/api/tasks', headers: { authorization } })).status).toBe(200);
    expect((await send(d.port, { path: `/api/tasks/${taskId}/stream?token=${d.token}` })).status).toBe(200);
    expect(await upgrade(d.port, `/api/ws?token=${d.token}`, { origin: own() })).toBe('upgraded');
    const edit = await send(d.port, { method: 'PATCH', path: `/api/tasks/${taskId}`, ...json({ title: 'edited from the board' }), headers: { authorization, origin: own(), 'content-type': 'application/json' } });
    expect(edit.status).toBe(200);
    expect((await d.store.tasks.get(taskId)).title).toBe('edited from the board');
    // Nothing from a foreign page (the Origin check), nor a form post (the content type).
    const before = await snapshot(d);
    expectRefusal(await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/cancel`, ...json({}), headers: { authorization, origin: 'http://localhost:8000', 'content-type': 'application/json' } }), 403, 'FORBIDDEN', 'a foreign origin');
    expectRefusal(await send(d.port, { method: 'POST', path: `/api/tasks/${taskId}/cancel`, headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' }, body: 'reason=x' }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'a form post');
    expect(await snapshot(d)).toEqual(before);

    // The cookie an older board set (the token itself, sent to every port of 127.0.0.1) is cleared wherever it comes.
    for (const path of ['/', '/api/tasks']) {
      const old = await send(d.port, { path, headers: { cookie: `maestro_token_${d.port}=${d.token}` } });
      expect(String(old.headers['set-cookie']), path).toBe(`maestro_token_${d.port}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    }

    // A wrong link sets nothing.
    const bad = await send(d.port, { path: `/?token=${'B'.repeat(43)}` });
    expectRefusal(bad, 401, 'UNAUTHORIZED', 'a link with a wrong token');
    expect(bad.headers.location).toBeUndefined();
    // /api is never the board's, even where the board's fallback route would match.
    expectRefusal(await send(d.port, { path: '/api/not-a-route' }), 401, 'UNAUTHORIZED', 'an unknown /api path');
  });
});

describe('opening the door on purpose', () => {
  afterAll(() => removeTempDirs());

  it('allowedHosts and allowedOrigins let in exactly what they name', async () => {
    const d = await startTestDaemon({ allowedHosts: ['maestro.example'], allowedOrigins: ['https://board.example'] }, { noOrchestrator: true });
    try {
      const auth = { authorization: `Bearer ${d.token}` };
      expect((await send(d.port, { path: '/api/tasks', headers: { ...auth, host: 'maestro.example' } })).status).toBe(200);
      expect((await send(d.port, { path: '/api/tasks', headers: { ...auth, host: 'MAESTRO.example:443' } })).status).toBe(200);
      expectRefusal(await send(d.port, { path: '/api/tasks', headers: { ...auth, host: 'other.example' } }), 403, 'FORBIDDEN', 'a host not listed');
      // Behind the proxy, the board's own origin is the proxy's name.
      const post = (origin: string, host = 'maestro.example') => send(d.port, { method: 'POST', path: '/api/projects', ...json({ name: 'x', repoPath: '/nonexistent' }), headers: { ...auth, host, origin, 'content-type': 'application/json' } });
      expect((await post('https://maestro.example')).status).toBe(400); // past the guard: the body's own error
      expect((await post('https://board.example')).status).toBe(400);
      expectRefusal(await post('https://board.example.evil'), 403, 'FORBIDDEN', 'an origin not listed');
      expectRefusal(await post('http://evil.example', 'evil.example'), 403, 'FORBIDDEN', 'a rebinding host with its own origin');
    } finally {
      await d.stop();
    }
  });

  it('--no-auth is refused beyond loopback; on loopback it asks no token, warns, and still checks Host and Origin', async () => {
    await expect(startTestDaemon({ host: '0.0.0.0', noAuth: true })).rejects.toThrow(/Refusing --no-auth on 0\.0\.0\.0.*127\.0\.0\.1, localhost or ::1 only/);
    const d = await startTestDaemon({ noAuth: true }, { noOrchestrator: true });
    try {
      expect(d.token).toBeNull();
      expect(d.logs.join('')).toMatch(/--no-auth: the API on 127\.0\.0\.1 asks for no token/);
      expect((await send(d.port, { path: '/api/tasks' })).status).toBe(200);
      expectRefusal(await send(d.port, { path: '/api/tasks', headers: { host: 'evil.example' } }), 403, 'FORBIDDEN', 'rebinding with --no-auth');
      expectRefusal(await send(d.port, { method: 'POST', path: '/api/tasks', ...json({}), headers: { origin: 'http://evil.example', 'content-type': 'application/json' } }), 403, 'FORBIDDEN', 'a foreign origin with --no-auth');
    } finally {
      await d.stop();
    }
  });
});

describe('the CLI and the token file', () => {
  afterAll(() => removeTempDirs());

  it('the CLI reads the token from its home; without the home it is refused and told where the token is', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const withHome = await cliJson<{ tasks: unknown[] }>(['task', 'list', '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
      expect(withHome.code).toBe(0);
      expect(withHome.body.tasks).toEqual([]);
      // Another user, or a process without this home: no token, no daemon.
      const stranger = await cli(['task', 'list', '--url', d.url]);
      expect(stranger.code).toBe(1);
      expect(stranger.stderr).toContain('$MAESTRO_HOME/token');
      // `status` sees a daemon that refuses it, not "no daemon".
      const status = await cli(['status', '--url', d.url]);
      expect(status.code).toBe(1);
      expect(status.stderr).toContain('$MAESTRO_HOME/token');
      // MAESTRO_TOKEN overrides the home's file.
      const overridden = await cli(['task', 'list', '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home, MAESTRO_TOKEN: 'not-the-token-at-all' }));
      expect(overridden.code).toBe(1);
      expect(overridden.stderr).toMatch(/not this daemon's/);
    } finally {
      await d.stop();
    }
  }, budget(120_000));

  it('`maestro serve` prints the board link with the home token once, and the link logs a browser in; --no-auth beyond loopback exits 1', async () => {
    const home = tempDir('maestro-home-');
    const child = startCli(['serve', '--home', home, '--port', '0', '--no-demo'], cleanEnv());
    const untrack = trackResource('process', `daemon ${child.pid}`, () => child.kill('SIGKILL'));
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const check = () => {
          // The last line of the start-up message: everything before it is printed.
          const m = /open the board: (\S+)/.exec(err);
          if (m && err.includes('Ctrl-C stops')) resolve(m[1]!);
        };
        child.stderr!.on('data', check);
        child.once('exit', (code) => reject(new Error(`serve exited (${code}) before printing the link: ${err}`)));
      });
      const token = readFileSync(join(home, 'token'), 'utf8').trim();
      const link = new URL(line);
      expect(link.searchParams.get('token')).toBe(token);
      expect(err.split(token).length - 1).toBe(1); // printed once, nowhere else
      expect(err).toContain(`read the token from ${join(home, 'token')}`);
      const port = Number(link.port);
      const opened = await send(port, { path: `${link.pathname}${link.search}` });
      expect(opened.status).toBe(200);
      expect(opened.headers['set-cookie']).toBeUndefined();
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      untrack();
    }
    const refused = await cli(['serve', '--home', tempDir('maestro-home-'), '--port', '0', '--no-demo', '--host', '0.0.0.0', '--no-auth']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Refusing --no-auth on 0\.0\.0\.0/);
  }, budget(180_000));
});
