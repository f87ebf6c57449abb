/**
 * The CLI pointed at something that is not a Maestro daemon (a plain web server answering `{}` or an HTML
 * page): every command says the URL does not answer as a daemon, what came back and what to do, instead of
 * the JavaScript error the missing fields made ("projects is not iterable", "Unexpected token '<'"); `status`
 * too, instead of "No daemon answers".
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { budget } from '../helpers/budget.js';
import { cli, type CliResult } from './helpers.js';

let server: Server | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
  removeTempDirs();
});

/** A plain HTTP server answering every request with one status and body, on every address (so 127.0.0.2 reaches it too). */
async function plainServer(contentType: string, body: string, status = 200, headers: Record<string, string> = {}): Promise<number> {
  server = createServer((_req, res) => res.writeHead(status, { 'content-type': contentType, ...headers }).end(body));
  await new Promise<void>((r) => server!.listen(0, '0.0.0.0', r));
  return (server.address() as { port: number }).port;
}

function refused(r: CliResult, url: string): string {
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stderr).toContain(`maestro: ${url} does not answer as a Maestro daemon`);
  expect(r.stderr).toContain('[NOT_A_DAEMON]');
  expect(r.stderr).not.toMatch(/Cannot read properties|is not iterable|Unexpected token|is not valid JSON/);
  return r.stderr;
}

describe('maestro CLI against a server that is not a Maestro daemon', { timeout: budget(120_000) }, () => {
  it('says so for a JSON answer of {}, on loopback and on another address (no token sent there)', async () => {
    const port = await plainServer('application/json', '{}');
    for (const url of [`http://127.0.0.1:${port}`, `http://127.0.0.2:${port}`]) {
      const list = refused(await cli(['task', 'list', '--url', url]), url);
      expect(list).toContain('GET /api/tasks got HTTP 200 (application/json, starting "{}")');
      expect(list).toContain('Point --url / MAESTRO_URL at the address `maestro serve` printed');
    }
    // `status` asks the health check first: it says what answers there instead of "No daemon answers".
    const url = `http://127.0.0.1:${port}`;
    const status = await cli(['status', '--url', url]);
    expect([status.code, status.stderr]).toEqual([1, '']);
    expect(status.stdout).toBe(`${url} does not answer as a Maestro daemon: GET /api/health got HTTP 200 (application/json, starting "{}"). Point --url / MAESTRO_URL at the address \`maestro serve\` printed, or start a daemon with \`maestro serve\`.\n`);
    const json = await cli(['status', '--url', url, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ daemon: { url, running: false, notADaemon: expect.stringContaining('GET /api/health got HTTP 200 (application/json, starting "{}")') }, projects: [] });
  });

  it('says so for an HTML page, quoting its first characters with escapes shown, not run', async () => {
    const port = await plainServer('text/html', '<html>hi\u001b[2J</html>');
    const url = `http://127.0.0.1:${port}`;
    const show = refused(await cli(['task', 'show', 't_1', '--url', url]), url);
    expect(show).toContain('(text/html, starting "<html>hi\\u001b[2J</html>")');
    expect(show).not.toContain('\u001b');
    const json = await cli(['task', 'list', '--url', url, '--json']);
    expect(JSON.parse(json.stdout).error.code).toBe('NOT_A_DAEMON');
    const status = await cli(['status', '--url', url]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`${url} does not answer as a Maestro daemon: GET /api/health got HTTP 200 (text/html, starting "<html>hi\\u001b[2J</html>")`);
    expect(status.stdout).not.toContain('\u001b');
  });

  it('says so for an error page (a web server without /api/health), not as the daemon\'s NOT_FOUND or "No daemon answers"', async () => {
    const port = await plainServer('text/html', '<h1>404 Not Found</h1>', 404);
    const url = `http://127.0.0.1:${port}`;
    const status = await cli(['status', '--url', url]);
    expect([status.code, status.stderr]).toEqual([1, '']);
    expect(status.stdout).toContain(`${url} does not answer as a Maestro daemon: GET /api/health got HTTP 404 (text/html, starting "<h1>404 Not Found</h1>")`);
    const show = refused(await cli(['task', 'show', 't_1', '--url', url]), url);
    expect(show).toContain('GET /api/tasks/t_1 got HTTP 404 (text/html, starting "<h1>404 Not Found</h1>")');
  });

  it('says a daemon whose health check fails answers, with its message, not "No daemon answers"', async () => {
    // The daemon's mark and error shape: a daemon that is up, whose health route failed.
    const port = await plainServer('application/json', '{"error":{"code":"INTERNAL","message":"the database does not answer"}}', 500, { 'x-trace-id': 'tr-1' });
    const url = `http://127.0.0.1:${port}`;
    const status = await cli(['status', '--url', url]);
    expect([status.code, status.stderr]).toEqual([1, '']);
    expect(status.stdout).toBe(`The daemon at ${url} answers, but its health check failed: the database does not answer\n`);
    const json = await cli(['status', '--url', url, '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ daemon: { url, running: false, healthFailed: 'the database does not answer' }, projects: [] });
  });
});
