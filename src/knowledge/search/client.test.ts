import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonTarget, searchViaDaemon } from './client.js';

const homes: string[] = [];
let server: Server | null = null;
afterEach(async () => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

/** A home whose daemon lock names `pid` on `host` (daemon/homeLock.ts writes the same shape). */
function homeWithLock(pid: number | null, host = hostname()): string {
  const home = mkdtempSync(join(tmpdir(), 'maestro-client-home-'));
  homes.push(home);
  if (pid !== null) writeFileSync(join(home, 'daemon.lock'), JSON.stringify({ pid, host, startedAt: Date.now() }));
  writeFileSync(join(home, 'token'), `${'t'.repeat(43)}\n`, { mode: 0o600 });
  return home;
}

/** A bare HTTP server answering every request with one status and body. */
async function answering(status: number, body: unknown): Promise<string> {
  server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('which daemon maestro search asks', () => {
  it('the MAESTRO_URL daemon always with MAESTRO_SEARCH_DAEMON=on (lock or not), never with off', () => {
    const home = homeWithLock(process.pid);
    expect(daemonTarget({ MAESTRO_HOME: homeWithLock(null), MAESTRO_URL: 'http://127.0.0.1:9', MAESTRO_SEARCH_DAEMON: 'on' })).toEqual({ url: 'http://127.0.0.1:9', named: true });
    expect(daemonTarget({ MAESTRO_HOME: home, MAESTRO_URL: 'http://127.0.0.1:9', MAESTRO_SEARCH_DAEMON: 'off' })).toBeNull();
    expect(daemonTarget({ MAESTRO_HOME: home, MAESTRO_SEARCH_DAEMON: 'OFF' })).toBeNull();
  });

  it('refuses a setting it does not know, and the old MAESTRO_DAEMON_URL, saying what to set instead', () => {
    const home = homeWithLock(process.pid);
    expect(() => daemonTarget({ MAESTRO_HOME: home, MAESTRO_SEARCH_DAEMON: 'sometimes' })).toThrow('MAESTRO_SEARCH_DAEMON must be auto, on or off, got "sometimes".');
    expect(() => daemonTarget({ MAESTRO_HOME: home, MAESTRO_DAEMON_URL: 'http://127.0.0.1:9' })).toThrow(/MAESTRO_DAEMON_URL is gone: MAESTRO_URL names the daemon \(set it to "http:\/\/127\.0\.0\.1:9"/);
    // Empty, as scripts clear it, is no setting at all.
    expect(daemonTarget({ MAESTRO_HOME: home, MAESTRO_DAEMON_URL: '', MAESTRO_SEARCH_DAEMON: '' })).toEqual({ url: 'http://127.0.0.1:4300', named: false });
  });

  it("else this home's daemon while its lock names a live process on this host, at the CLI's daemon URL", () => {
    const live = homeWithLock(process.pid);
    expect(daemonTarget({ MAESTRO_HOME: live })).toEqual({ url: 'http://127.0.0.1:4300', named: false });
    expect(daemonTarget({ MAESTRO_HOME: live, MAESTRO_PORT: '5123' })).toEqual({ url: 'http://127.0.0.1:5123', named: false });
    expect(daemonTarget({ MAESTRO_HOME: live, MAESTRO_URL: 'http://localhost:7000', MAESTRO_PORT: '5123' })).toEqual({ url: 'http://localhost:7000', named: false });
    const exited = spawnSync(process.execPath, ['-e', '0']).pid;
    expect(daemonTarget({ MAESTRO_HOME: homeWithLock(exited) })).toBeNull();
    expect(daemonTarget({ MAESTRO_HOME: homeWithLock(process.pid, `not-${hostname()}`) })).toBeNull();
    expect(daemonTarget({ MAESTRO_HOME: homeWithLock(null) })).toBeNull();
  });
});

describe('searchViaDaemon', () => {
  const req = { query: 'errors' };

  it("leaves the search to this process when the home's daemon refuses, errs or answers with vectors", async () => {
    const home = homeWithLock(process.pid);
    for (const [status, body] of [
      [401, { error: { code: 'UNAUTHORIZED', message: 'no' } }],
      [500, { error: { code: 'INTERNAL', message: 'Internal error' } }],
      [200, { count: 0, results: [], retrieval: 'hybrid' }],
    ] as const) {
      const url = await answering(status, body);
      expect(await searchViaDaemon(req, '/p/.workflow', false, { MAESTRO_HOME: home, MAESTRO_URL: url })).toBeUndefined();
      await new Promise((r) => server!.close(r));
      server = null;
    }
    const url = await answering(200, { count: 0, results: [], retrieval: 'lexical' });
    expect(await searchViaDaemon(req, '/p/.workflow', false, { MAESTRO_HOME: home, MAESTRO_URL: url })).toEqual({ count: 0, results: [], retrieval: 'lexical' });
    // Settings of this CLI the daemon may not share: it is not asked at all.
    expect(await searchViaDaemon(req, '/p/.workflow', false, { MAESTRO_HOME: home, MAESTRO_URL: url, MAESTRO_UID: 'someone' })).toBeUndefined();
  });

  it('reports what a named daemon says is wrong', async () => {
    const url = await answering(401, { error: { code: 'UNAUTHORIZED', message: 'The token is wrong.' } });
    await expect(searchViaDaemon(req, '/p/.workflow', false, { MAESTRO_HOME: homeWithLock(null), MAESTRO_URL: url, MAESTRO_SEARCH_DAEMON: 'on' })).rejects.toThrow('The token is wrong.');
  });
});
