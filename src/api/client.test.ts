import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, resolveApiUrl } from './client.js';

let server: Server | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

/** A bare HTTP server that answers every request with one status and body, recording the headers it saw; with the daemon's trace id unless `marked` is false. */
async function answering(status: number, body: string, host = '127.0.0.1', marked = true): Promise<{ url: string; seen: Record<string, string | string[] | undefined>[] }> {
  const seen: Record<string, string | string[] | undefined>[] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(status, { 'content-type': 'application/json', ...(marked ? { 'x-trace-id': 'trace-1' } : {}) }).end(body);
  });
  await new Promise<void>((r) => server!.listen(0, host, r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

describe('ApiClient', () => {
  it('takes the URL from --url, then MAESTRO_URL, then MAESTRO_PORT, then port 4300', () => {
    expect(resolveApiUrl('http://h:1/', { MAESTRO_URL: 'http://u:2' })).toBe('http://h:1');
    expect(resolveApiUrl(undefined, { MAESTRO_URL: 'http://u:2', MAESTRO_PORT: '3' })).toBe('http://u:2');
    expect(resolveApiUrl(undefined, { MAESTRO_PORT: '4555' })).toBe('http://127.0.0.1:4555');
    expect(resolveApiUrl(undefined, {})).toBe('http://127.0.0.1:4300');
    expect(() => resolveApiUrl('not a url', {})).toThrow(/"not a url" \(from --url\) is not a URL/);
    expect(() => resolveApiUrl(undefined, { MAESTRO_URL: 'ftp://x' })).toThrow(/must be http/);
  });

  it("turns an API error into a MaestroError with the API's code and message, and sends the token", async () => {
    const { url, seen } = await answering(409, JSON.stringify({ error: { code: 'TASK_BUSY', message: 'Task t1 has a run in flight.' } }));
    const client = new ApiClient({ url }, { MAESTRO_TOKEN: 'tok-123456' });
    await expect(client.get('/api/tasks/t1')).rejects.toMatchObject({ name: 'MaestroError', code: 'TASK_BUSY', message: 'Task t1 has a run in flight.', status: 409 });
    expect(seen[0]!.authorization).toBe('Bearer tok-123456');
  });

  it('keeps an unknown API code in the details and says what answered when the body is not JSON', async () => {
    const { url } = await answering(502, '<html>bad gateway</html>');
    await expect(new ApiClient({ url }, {}).get('/api/projects')).rejects.toMatchObject({ code: 'INTERNAL', message: 'GET /api/projects answered HTTP 502: <html>bad gateway</html>' });
    await new Promise((r) => server!.close(r));
    const nothing = await answering(500, 'null');
    await expect(new ApiClient({ url: nothing.url }, {}).get('/api/projects')).rejects.toMatchObject({ code: 'INTERNAL', message: 'GET /api/projects answered HTTP 500: null' });
  });

  it('takes a 2xx answer without the trace id every daemon answer carries as not a daemon, whatever its JSON', async () => {
    const { url } = await answering(200, '{"projects":[]}', '127.0.0.1', false);
    await expect(new ApiClient({ url }, {}).get('/api/projects')).rejects.toMatchObject({ code: 'NOT_A_DAEMON', message: expect.stringContaining('GET /api/projects got HTTP 200 (application/json, starting "{\\"projects\\":[]}")') });
    expect(await new ApiClient({ url }, {}).ping()).toBe(false);
    await expect(new ApiClient({ url }, {}).probe()).resolves.toMatchObject({ code: 'NOT_A_DAEMON', message: expect.stringContaining('GET /api/health got HTTP 200') });
  });

  it('takes an error page without the trace id as not a daemon, and an answer in the daemon\'s error shape as the daemon\'s', async () => {
    const page = await answering(404, '<html>Not Found</html>', '127.0.0.1', false);
    await expect(new ApiClient({ url: page.url }, {}).get('/api/health')).rejects.toMatchObject({ code: 'NOT_A_DAEMON', message: expect.stringContaining('GET /api/health got HTTP 404 (application/json, starting "<html>Not Found</html>")') });
    await new Promise((r) => server!.close(r));
    // What the daemon writes on the socket before its hooks run (api/errors.ts clientErrorHandler) has no mark.
    const refused = await answering(400, '{"error":{"code":"BAD_INPUT","message":"The request is not valid HTTP."}}', '127.0.0.1', false);
    await expect(new ApiClient({ url: refused.url }, {}).get('/api/tasks')).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'The request is not valid HTTP.' });
  });

  it('reads the token from $MAESTRO_HOME/token for a daemon on loopback only; MAESTRO_TOKEN overrides; says X-Maestro-Client', async () => {
    const home = mkdtempSync(join(tmpdir(), 'maestro-client-home-'));
    try {
      const token = 'T'.repeat(43);
      writeFileSync(join(home, 'token'), `${token}\n`, { mode: 0o600 });
      const { url, seen } = await answering(200, '{}', '0.0.0.0');
      const port = new URL(url).port;
      await new ApiClient({ url }, { MAESTRO_HOME: home }).get('/api/tasks');
      await new ApiClient({ url: `http://localhost:${port}` }, { MAESTRO_HOME: home }).get('/api/tasks');
      await new ApiClient({ url }, { MAESTRO_HOME: home, MAESTRO_TOKEN: 'from-env-123' }).get('/api/tasks');
      // Another address (here 127.0.0.2, which is not the loopback name the daemon binds) never gets the local secret.
      await new ApiClient({ url: `http://127.0.0.2:${port}` }, { MAESTRO_HOME: home }).get('/api/tasks');
      expect(seen.map((h) => h.authorization)).toEqual([`Bearer ${token}`, `Bearer ${token}`, 'Bearer from-env-123', undefined]);
      expect(seen.every((h) => h['x-maestro-client'] === 'cli' && h.origin === undefined)).toBe(true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
  it('reads no more of an event stream once its caller aborted, even events that came in the same chunk', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-trace-id': 'trace-1' });
      // Three events in one write: a reader that goes on after an abort hands all three over.
      res.write('id: r:1\nevent: token\ndata: "a"\n\nid: r:2\nevent: result\ndata: {}\n\nid: r:3\nevent: token\ndata: "b"\n\n');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const connection = new AbortController();
    const seen: string[] = [];
    const read = new ApiClient({ url }, {}).readSse('/api/tasks/t1/stream', {
      signal: connection.signal,
      onEvent: (e) => {
        seen.push(e.id!);
        if (e.event === 'result') connection.abort();
      },
    });
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual(['r:1', 'r:2']);
    server.closeAllConnections();
  });
});
