/** The daemon serves the built board at `/`, index.html for other app paths, and JSON 404s under /api. */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boardUnavailableRoutes, webRoutes } from '../../src/api/web.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

describe('webRoutes', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 0 });
    d = null;
    removeTempDirs();
  });

  function fakeDist(): string {
    const dist = tempDir('maestro-dist-');
    mkdirSync(join(dist, 'assets'));
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>board</title>');
    writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
    return dist;
  }

  it('serves files, falls back to index.html, and keeps /api answers JSON', async () => {
    const dist = fakeDist();
    d = await startTestDaemon({}, { noOrchestrator: true, plugins: [(app) => webRoutes(app, { dist })] });
    const root = await d.app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(200);
    expect(root.body).toContain('<title>board</title>');
    const asset = await d.app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(asset.body).toBe('console.log(1)');
    expect(asset.headers['cache-control']).toContain('immutable');
    const deep = await d.app.inject({ method: 'GET', url: '/task/t_1?x=1' });
    expect(deep.statusCode).toBe(200);
    expect(deep.body).toContain('<title>board</title>');
    expect(deep.headers['cache-control']).toBe('no-cache');
    const api = await d.app.inject({ method: 'GET', url: '/api/no-such-route?q=x' });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No route GET /api/no-such-route.' } });
    // The API still answers beside it.
    expect((await d.app.inject({ method: 'GET', url: '/api/health' })).json()).toMatchObject({ ok: true, conditions: [] });
  });

  it('serves the files of a build made after it started (the index.html it serves names them), and a missing asset is a 404, not the page', async () => {
    const dist = fakeDist();
    d = await startTestDaemon({}, { noOrchestrator: true, plugins: [(app) => webRoutes(app, { dist })] });
    // Another `maestro serve` or `npm run build:web` of the checkout rebuilds web/dist: new names, the old ones gone.
    writeFileSync(join(dist, 'assets', 'index-def456.js'), 'console.log(2)');
    rmSync(join(dist, 'assets', 'index-abc123.js'));
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>board 2</title><script type="module" src="/assets/index-def456.js"></script>');
    expect((await d.app.inject({ method: 'GET', url: '/' })).body).toContain('/assets/index-def456.js');
    const rebuilt = await d.app.inject({ method: 'GET', url: '/assets/index-def456.js' });
    expect([rebuilt.statusCode, rebuilt.body]).toEqual([200, 'console.log(2)']);
    // A script, as a module script must be (the page's HTML in its place is refused by the browser: a blank board).
    expect(rebuilt.headers['content-type']).toMatch(/^(application|text)\/javascript/);
    expect(rebuilt.headers['cache-control']).toContain('immutable');
    for (const url of ['/assets/index-zzz999.js', '/assets/%2e%2e%2findex.html', '/assets/.hidden']) {
      const missing = await d.app.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(missing.headers['content-type'], url).toContain('application/json');
      // Answered without the token: it names no folder of the machine.
      expect(missing.body, url).not.toContain(dist);
    }
  });

  it('refuses to start on a missing build, naming the file', async () => {
    const dist = tempDir('maestro-empty-dist-');
    await expect(startTestDaemon({}, { noOrchestrator: true, plugins: [(app) => webRoutes(app, { dist })] })).rejects.toThrow(`${join(dist, 'index.html')} is missing`);
  });

  it('without a board (an install that cannot build it), `/` says why with 503 and the API still answers', async () => {
    const why = "Cannot build the web board: Vite's bundler (rolldown) has no native binding for this platform.";
    d = await startTestDaemon({}, { noOrchestrator: true, plugins: [(app) => boardUnavailableRoutes(app, why)] });
    for (const url of ['/', '/task/t_1']) {
      const page = await d.app.inject({ method: 'GET', url });
      expect(page.statusCode).toBe(503);
      expect(page.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(page.body).toBe(`The Maestro daemon is running, but without its web board.\n\n${why}\n\nThe API (/api) and the maestro CLI work meanwhile.\n`);
    }
    const api = await d.app.inject({ method: 'GET', url: '/api/no-such-route' });
    expect(api.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No route GET /api/no-such-route.' } });
    expect((await d.app.inject({ method: 'GET', url: '/api/health' })).json()).toMatchObject({ ok: true, conditions: [] });
  });
});
