/**
 * The sandbox's proxy on its own, spoken to over its Unix socket as the relay inside a sandbox speaks to it (the relay
 * only copies bytes: sandboxNet.test.ts runs it for real in bwrap), with real servers on the host's loopback behind
 * it: plain-HTTP forwarding, what an allow entry that is an IP address covers, the caps, and chaining to the host's
 * own proxy (test/helpers/upstreamProxy.ts).
 */
import { createServer as createHttpServer, Agent, request, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { poll } from '../../../test/helpers/wait.js';
import { startUpstreamProxy, type TestUpstream } from '../../../test/helpers/upstreamProxy.js';
import { PROXY_LIMITS, SandboxProxy } from './proxy.js';
import type { UpstreamProxy } from './upstream.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function proxy(allow: string[], upstream?: UpstreamProxy, limits = PROXY_LIMITS): string {
  const p = new SandboxProxy(allow, upstream, limits);
  cleanups.push(() => p.stop());
  return p.start();
}

async function listening<S extends Server | HttpServer>(server: S): Promise<number> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  cleanups.push(() => new Promise((ok) => ((server as HttpServer).closeAllConnections?.(), server.close(ok))));
  return (server.address() as AddressInfo).port;
}

/** A TCP server that greets, answers one line with "pong <line>" and ends. */
async function pongServer(): Promise<number> {
  return listening(createServer((c) => {
    c.write('hello\n');
    c.on('data', (d) => c.end(`pong ${d.toString().trim()}\n`));
    c.on('error', () => c.destroy());
  }));
}

/** An HTTP server that keeps each request's line and headers and answers with its name and the path. */
async function httpServer(name: string): Promise<{ port: number; seen: Array<{ line: string; headers: IncomingHttpHeaders; body: string }> }> {
  const seen: Array<{ line: string; headers: IncomingHttpHeaders; body: string }> = [];
  const port = await listening(createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ line: `${req.method} ${req.url} HTTP/${req.httpVersion}`, headers: req.headers, body });
      res.end(`${name} ${req.url}\n`);
    });
  }));
  return { port, seen };
}

/** Writes `text` to the proxy and reads until it ends the connection (or `until` is seen in what came back). */
function exchange(socket: string, text: string | Buffer, until?: string): Promise<string> {
  return new Promise((resolve) => {
    const c = connect(socket);
    let got = '';
    c.on('data', (d) => {
      got += d;
      if (until && got.includes(until)) {
        c.destroy();
        resolve(got);
      }
    });
    c.on('close', () => resolve(got));
    c.on('error', (e) => resolve(`${got}${(e as NodeJS.ErrnoException).code}`));
    c.write(text);
  });
}

/** CONNECT to `target`; once the tunnel is up, "ping": what the far end said, or the proxy's answer. */
async function tunnel(socket: string, target: string): Promise<string> {
  return new Promise((resolve) => {
    const c = connect(socket);
    let got = '';
    let open = false;
    c.on('data', (d) => {
      got += d;
      if (!open && got.startsWith('HTTP/1.1 200') && got.includes('\r\n\r\n')) {
        open = true;
        got = got.slice(got.indexOf('\r\n\r\n') + 4);
        c.write('ping\n');
      }
    });
    c.on('close', () => resolve(open ? got : got.split('\r\n')[0] + ' | ' + got.slice(got.indexOf('\r\n\r\n') + 4).trim()));
    c.on('error', () => c.destroy());
    c.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

describe('plain http:// requests through the sandbox proxy', () => {
  it('go to the server in origin form, its Host kept, the client\'s hop-by-hop headers dropped, one request per connection', async () => {
    const a = await httpServer('A');
    const socket = proxy([`127.0.0.1:${a.port}`]);
    const head = `POST http://127.0.0.1:${a.port}/greet?who=world HTTP/1.1\r\nHost: 127.0.0.1:${a.port}\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nProxy-Authorization: Basic c2VjcmV0\r\nX-Kept: yes\r\nContent-Length: 11\r\n\r\nhello`;
    // The body arrives partly with the head and partly after it.
    const c = connect(socket);
    let got = '';
    c.on('data', (d) => (got += d));
    const ended = new Promise((ok) => c.on('close', ok));
    c.write(head, () => setImmediate(() => c.write(' world')));
    await ended;
    expect(a.seen).toHaveLength(1);
    expect(a.seen[0]!.line).toBe('POST /greet?who=world HTTP/1.1');
    expect(a.seen[0]!.headers).toMatchObject({ host: `127.0.0.1:${a.port}`, 'x-kept': 'yes', connection: 'close' });
    expect(a.seen[0]!.headers['proxy-connection']).toBeUndefined();
    expect(a.seen[0]!.headers['proxy-authorization']).toBeUndefined();
    expect(a.seen[0]!.body).toBe('hello world');
    expect(got).toMatch(/^HTTP\/1.1 200 OK\r\n/);
    expect(got.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(got.endsWith('A /greet?who=world\n')).toBe(true);
  });

  it('tell a keep-alive client to close though the server said keep-alive: its next request, to another host, reaches that host', async () => {
    // A server that ignores the request's Connection: close and keeps the connection open.
    const a = await listening(createServer((c) => {
      c.on('data', () => c.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\nA\n'));
      c.on('error', () => c.destroy());
    }));
    const b = await httpServer('B');
    const socket = proxy([`127.0.0.1:${a}`, `127.0.0.1:${b.port}`]);
    // Node's client with a keep-alive pool: both requests go to the one proxy, so it would reuse a connection.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const get = (port: number) => new Promise<{ body: string; connection: string | undefined }>((resolve, reject) => {
      const req = request({ socketPath: socket, agent, path: `http://127.0.0.1:${port}/`, headers: { host: `127.0.0.1:${port}` } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ body, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end();
    });
    const first = await get(a);
    const second = await get(b.port);
    expect(second.body).toBe('B /\n');
    expect(b.seen.map((s) => s.line)).toEqual(['GET / HTTP/1.1']);
    expect([first, second]).toEqual([{ body: 'A\n', connection: 'close' }, { body: 'B /\n', connection: 'close' }]);
  });

  it('refuses what is not an absolute http:// URL, with a line saying why', async () => {
    const socket = proxy([]);
    expect(await exchange(socket, 'GET /relative HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1.1 400 Bad Request\r\n[\s\S]*maestro sandbox proxy: GET wants an absolute http:\/\/ URL through a proxy, got "\/relative"\n$/);
    expect(await exchange(socket, 'GET https://example.com/ HTTP/1.1\r\n\r\n')).toMatch(/only http:\/\/ is forwarded as a request \(https goes through CONNECT\), got https:\n$/);
  });
});

describe('an allow entry', () => {
  it('that is an IP address lets a name that resolves to it through, on its port only; a name entry does not cover the address', async () => {
    const port = await pongServer();
    const byAddress = proxy([`127.0.0.1:${port}`]);
    expect(await tunnel(byAddress, `localhost:${port}`)).toBe('hello\npong ping\n');
    expect(await tunnel(byAddress, `localhost:${port + 1}`)).toMatch(new RegExp(`^HTTP/1.1 403 Forbidden \\| maestro sandbox proxy: port ${port + 1} is refused`));
    const byName = proxy([`localhost:${port}`]);
    expect(await tunnel(byName, `localhost:${port}`)).toBe('hello\npong ping\n');
    expect(await tunnel(byName, `127.0.0.1:${port}`)).toBe(`HTTP/1.1 403 Forbidden | maestro sandbox proxy: port ${port} is refused (only 443 and 80 go out); list "127.0.0.1:${port}" in agentSandbox.allow to let the sandbox reach it`);
  });

  it('that is an IPv6 address matches however the address is written, and a refusal names one in brackets', async () => {
    const socket = proxy(['[0:0::1]:443']);
    // Allowed, so the proxy tries it; nothing listens on the host's [::1]:443 here.
    expect(await tunnel(socket, '[::1]:443')).toMatch(/^HTTP\/1.1 502 Bad Gateway \| maestro sandbox proxy: \[::1\]:443: (ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH)$/);
    // The entry a refusal names is one the config takes: the address in brackets.
    expect(await tunnel(socket, '[::1]:8443')).toBe('HTTP/1.1 403 Forbidden | maestro sandbox proxy: port 8443 is refused (only 443 and 80 go out); list "[::1]:8443" in agentSandbox.allow to let the sandbox reach it');
  });
});

describe('the caps', () => {
  it(`${PROXY_LIMITS.maxConnections} connections at once: one more is answered 503 with a line, and once one ends the next is served`, async () => {
    const port = await pongServer();
    const socket = proxy([`127.0.0.1:${port}`]);
    const open: Socket[] = [];
    cleanups.push(() => open.forEach((s) => s.destroy()));
    // Each waits for its tunnel, so the proxy has taken every one before the next is counted.
    for (let i = 0; i < PROXY_LIMITS.maxConnections; i++) {
      const c = connect(socket);
      open.push(c);
      await new Promise<void>((ok) => {
        c.once('data', () => ok());
        c.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
      });
    }
    expect(await exchange(socket, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1.1 503 Service Unavailable\r\n[\s\S]*\r\n\r\nmaestro sandbox proxy: 256 connections are open already\n$/);
    open.pop()!.destroy();
    await poll(async () => (await tunnel(socket, `127.0.0.1:${port}`)) === 'hello\npong ping\n', 'a tunnel once one of the 256 ended', 30_000);
  });

  it('a request head over 16 KiB is answered 431, one that does not arrive whole in time 408, each with a line, and the connection ends', async () => {
    const socket = proxy([]);
    const long = `CONNECT example.com:443 HTTP/1.1\r\nX-Long: ${'a'.repeat(PROXY_LIMITS.maxHeadBytes)}`;
    expect(await exchange(socket, long)).toMatch(/^HTTP\/1.1 431 Request Header Fields Too Large\r\n[\s\S]*maestro sandbox proxy: the request head is over 16384 bytes\n$/);
    const quick = proxy([], undefined, { ...PROXY_LIMITS, headMs: 300 });
    expect(await exchange(quick, 'CONNECT example.com:443 HTTP/1.1\r\nHost: exa')).toMatch(/^HTTP\/1.1 408 Request Timeout\r\n[\s\S]*maestro sandbox proxy: no whole request head within 0.3 s\n$/);
  });
});

describe('through the host\'s own proxy (the daemon\'s HTTPS_PROXY and HTTP_PROXY)', () => {
  let up: TestUpstream;
  const upstream = (extra: Partial<UpstreamProxy> = {}): UpstreamProxy => ({ https: `http://me:s%40cret@${new URL(up.url).host}`, http: `http://me:s%40cret@${new URL(up.url).host}`, noProxy: [], ...extra });
  const auth = `Basic ${Buffer.from('me:s@cret').toString('base64')}`;

  it('a tunnel goes through it with its credentials, by the name asked or the public address; a refused destination never reaches it', async () => {
    up = await startUpstreamProxy({ credentials: 'me:s@cret', answerFor: (t) => (t === '93.184.215.14:443' ? 'a public server\n' : null) });
    cleanups.push(() => up.close());
    const port = await pongServer();
    const socket = proxy([`localhost:${port}`], upstream());
    expect(await tunnel(socket, `localhost:${port}`)).toBe('hello\npong ping\n');
    expect(await tunnel(socket, '93.184.215.14:443')).toBe('a public server\n');
    expect(await tunnel(socket, '169.254.169.254:80')).toMatch(/^HTTP\/1.1 403 Forbidden \| maestro sandbox proxy: 169.254.169.254 is 169.254.169.254, link-local/);
    expect(await tunnel(socket, '127.0.0.1:443')).toMatch(/^HTTP\/1.1 403 Forbidden \| maestro sandbox proxy: 127.0.0.1 is 127.0.0.1, loopback/);
    expect(await tunnel(socket, `127.0.0.1:${port}`)).toMatch(/^HTTP\/1.1 403 Forbidden \| maestro sandbox proxy: port \d+ is refused/);
    expect(up.seen).toEqual([{ line: `CONNECT localhost:${port}`, auth }, { line: 'CONNECT 93.184.215.14:443', auth }]);
  });

  it('a plain request goes to it in absolute form with its credentials, not the client\'s', async () => {
    up = await startUpstreamProxy({ credentials: 'me:s@cret' });
    cleanups.push(() => up.close());
    const a = await httpServer('A');
    const socket = proxy([`127.0.0.1:${a.port}`], upstream());
    const got = await exchange(socket, `GET http://127.0.0.1:${a.port}/x HTTP/1.1\r\nHost: 127.0.0.1:${a.port}\r\nProxy-Authorization: Basic bWluZQ==\r\n\r\n`);
    expect(got.endsWith('A /x\n')).toBe(true);
    expect(up.seen).toEqual([{ line: `GET http://127.0.0.1:${a.port}/x`, auth }]);
  });

  it('NO_PROXY\'s destinations go straight there; what the upstream refuses is a 502 naming it, without its credentials', async () => {
    up = await startUpstreamProxy({ credentials: 'someone:else' });
    cleanups.push(() => up.close());
    const port = await pongServer();
    const direct = proxy([`127.0.0.1:${port}`], upstream({ noProxy: ['127.0.0.0/8'] }));
    expect(await tunnel(direct, `127.0.0.1:${port}`)).toBe('hello\npong ping\n');
    expect(up.seen).toEqual([]);
    const refused = await tunnel(proxy([`127.0.0.1:${port}`], upstream()), `127.0.0.1:${port}`);
    expect(refused).toBe(`HTTP/1.1 502 Bad Gateway | maestro sandbox proxy: 127.0.0.1:${port}: the upstream proxy ${up.url}: CONNECT 127.0.0.1:${port}: HTTP/1.1 407 Proxy Authentication Required`);
    expect(refused).not.toContain('cret');
  });
});
