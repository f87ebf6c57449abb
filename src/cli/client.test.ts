import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, resolveApiUrl } from './client.js';

let server: Server | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

/** A bare HTTP server that answers every request with one status and body, recording the headers it saw. */
async function answering(status: number, body: string): Promise<{ url: string; seen: Record<string, string | string[] | undefined>[] }> {
  const seen: Record<string, string | string[] | undefined>[] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
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
  });
});
