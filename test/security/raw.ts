/**
 * Raw HTTP for the security suite: node's http module, so a test can send any
 * Host, Origin or body (fetch forbids setting Host), and a WebSocket upgrade
 * by hand, so a refusal is seen as the HTTP answer it is.
 */
import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request over a real socket to 127.0.0.1:`port`; the Host header is the daemon's own unless given. */
export function send(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    const r = request({ host: '127.0.0.1', port, method: req.method ?? 'GET', path: req.path, headers, agent: false }, (res) => {
      // An SSE stream never ends by itself: the status and headers are what a refusal test needs.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode!, headers: res.headers, body: '' });
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

/** A WebSocket upgrade of /api/ws: 'upgraded' (101) or the HTTP answer that refused it. */
export function upgrade(port: number, path: string, headers: Record<string, string> = {}): Promise<'upgraded' | RawResponse> {
  return new Promise((resolve, reject) => {
    const r = request({
      host: '127.0.0.1',
      port,
      path,
      agent: false,
      headers: { host: `127.0.0.1:${port}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), ...headers },
    });
    r.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve('upgraded');
    });
    r.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    r.on('error', reject);
    r.end();
  });
}

/** The documented error shape, with the expected status and code; returns the message. */
export function expectRefusal(res: RawResponse | 'upgraded', status: number, code: string, what: string): string {
  expect(res, what).not.toBe('upgraded');
  const r = res as RawResponse;
  let body: { error?: { code?: unknown; message?: unknown } } = {};
  try {
    body = JSON.parse(r.body);
  } catch {
    // the assertion below shows the body
  }
  expect({ what, status: r.status, code: body.error?.code }).toEqual({ what, status, code });
  expect(typeof body.error?.message, `${what}: ${r.body}`).toBe('string');
  return body.error!.message as string;
}

/** Everything the API can change, to prove a refusal changed none of it. */
export async function snapshot(d: TestDaemon): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of ['projects', 'tasks', 'runs', 'approvals', 'events']) out[t] = await d.store.db.all(`SELECT * FROM ${t} ORDER BY 1`);
  return out;
}

/**
 * Every route the app serves, as "METHOD /url", read from Fastify's own route
 * tree, so a route added later is covered without editing the tests.
 */
export function routesOf(d: TestDaemon): { method: string; url: string }[] {
  const lines = d.app.printRoutes({ commonPrefix: false }).split('\n');
  const stack: string[] = [];
  const routes: { method: string; url: string }[] = [];
  for (const line of lines) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    // Routes that share a segment show both parameter names (`/:id|:taskId`); the first will do.
    const url = `${stack[depth - 1] ?? ''}${m[2]!.replace(/(:\w+)(\|:\w+)+/g, '$1')}`;
    stack.push(url);
    for (const method of (m[3] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) routes.push({ method, url });
  }
  return routes;
}
