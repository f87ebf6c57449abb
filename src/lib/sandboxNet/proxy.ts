/**
 * The proxy a sandbox with `agentSandbox.network: "proxied"` reaches the outside through (the relay inside the
 * sandbox, relay.ts, hands it each connection over a Unix socket bound into the sandbox). It runs outside every
 * sandbox, one per process that starts sandboxes (the worker for agents and checks, the daemon for hooks) and allow
 * list, started on first use; its socket lies in a private folder (0700) removed when the process exits.
 *
 * It takes `CONNECT host:port` and plain-HTTP absolute-form requests (`GET http://host/path`, forwarded as the
 * first and only request on its connection: `Connection: close`). It resolves the host itself and connects to the
 * address it checked (a second lookup could answer otherwise), allowing public addresses on ports 443 and 80 and
 * refusing the rest (addresses.ts) with a 403 and one line saying why; an `allow` entry ("host:port", as the request
 * names it) goes through whatever it resolves to. It only relays bytes: it holds no secret, adds no credential.
 */
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blockedAddressKind } from './addresses.js';

export interface ProxyLimits {
  /** Connections open at once; one more is answered 503. */
  maxConnections: number;
  /** A tunnel with no byte either way for this long is closed. */
  idleMs: number;
  /** The request head must arrive within this, and within maxHeadBytes. */
  headMs: number;
  maxHeadBytes: number;
}

export const PROXY_LIMITS: ProxyLimits = { maxConnections: 256, idleMs: 10 * 60_000, headMs: 30_000, maxHeadBytes: 16 * 1024 };

const PUBLIC_PORTS = new Set([443, 80]);

/** A destination: where to connect, or why not (the 403's line). */
type Decision = { host: string; port: number } | { refused: string };

/** "host:port" as a request or the allow list names it, lower-case, an IPv6 host without its brackets. */
export const destinationKey = (host: string, port: number): string => `${host.replace(/^\[(.*)\]$/, '$1').toLowerCase()}:${port}`;

export class SandboxProxy {
  private server: Server | null = null;
  private folder: string | null = null;
  private readonly open = new Set<Socket>();
  private readonly allow: Set<string>;

  constructor(allow: readonly string[], private readonly limits: ProxyLimits = PROXY_LIMITS) {
    this.allow = new Set(allow.map((a) => {
      const at = a.lastIndexOf(':');
      return destinationKey(a.slice(0, at), Number(a.slice(at + 1)));
    }));
  }

  /** Its Unix socket's path, listening when this returns (a pipe binds and listens in listen() itself). */
  start(): string {
    if (this.server && this.folder) return join(this.folder, 'proxy.sock');
    this.folder = mkdtempSync(join(tmpdir(), 'maestro-net-'));
    const path = join(this.folder, 'proxy.sock');
    this.server = createServer((client) => this.accept(client));
    this.server.on('error', () => {}); // a failed bind leaves the relay unable to connect: each request fails, said there
    this.server.listen(path);
    // Not what keeps a process alive: the worker ends when its run does.
    this.server.unref();
    return path;
  }

  stop(): void {
    for (const s of this.open) s.destroy();
    this.server?.close();
    this.server = null;
    if (this.folder) rmSync(this.folder, { recursive: true, force: true });
    this.folder = null;
  }

  private accept(client: Socket): void {
    if (this.open.size >= this.limits.maxConnections) {
      answer(client, 503, `maestro sandbox proxy: ${this.limits.maxConnections} connections are open already`);
      return;
    }
    this.open.add(client);
    client.on('close', () => this.open.delete(client));
    client.on('error', () => client.destroy());
    client.setTimeout(this.limits.headMs, () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > this.limits.maxHeadBytes) answer(client, 431, `maestro sandbox proxy: the request head is over ${this.limits.maxHeadBytes} bytes`);
        return;
      }
      client.off('data', onData);
      client.pause();
      void this.serve(client, head.subarray(0, end).toString('latin1').split('\r\n'), head.subarray(end + 4));
    };
    client.on('data', onData);
  }

  private async serve(client: Socket, lines: string[], rest: Buffer): Promise<void> {
    const request = parseRequest(lines[0] ?? '');
    if ('refused' in request) return answer(client, 400, `maestro sandbox proxy: ${request.refused}`);
    const to = await this.decide(request.host, request.port);
    if ('refused' in to) return answer(client, 403, `maestro sandbox proxy: ${to.refused}`);
    if (client.destroyed) return;
    const upstream = connect({ host: to.host, port: to.port });
    // Its end reaches the client through the pipe; an error, or the client gone, ends both (stop() ends every client).
    client.on('close', () => upstream.destroy());
    upstream.once('error', (err) => answer(client, 502, `maestro sandbox proxy: ${request.host}:${request.port}: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    upstream.once('connect', () => {
      upstream.removeAllListeners('error');
      upstream.on('error', () => client.destroy());
      if (request.path === null) client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      else upstream.write(originForm(request.method, request.path, lines.slice(1)));
      if (rest.length) upstream.write(rest);
      for (const s of [client, upstream]) s.setTimeout(this.limits.idleMs, () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  /** Where `host:port` may be reached, or why not: the allow list, else a public address on 443 or 80. */
  private async decide(host: string, port: number): Promise<Decision> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (this.allow.has(destinationKey(host, port))) return { host: bare, port };
    const listIt = `; list "${destinationKey(host, port)}" in agentSandbox.allow to let the sandbox reach it`;
    if (!PUBLIC_PORTS.has(port)) return { refused: `port ${port} is refused (only 443 and 80 go out)${listIt}` };
    let addresses: Array<{ address: string }>;
    try {
      addresses = await lookup(bare, { all: true, verbatim: true });
    } catch (err) {
      return { refused: `${bare} does not resolve: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
    for (const { address } of addresses) {
      const kind = blockedAddressKind(address);
      if (kind) return { refused: `${bare} is ${address}, ${kind}: out of the sandbox's reach${listIt}` };
    }
    if (!addresses[0]) return { refused: `${bare} does not resolve` };
    return { host: addresses[0].address, port };
  }
}

type Request = { method: string; host: string; port: number; path: string | null } | { refused: string };

/** `CONNECT host:port HTTP/1.1` (path null: a tunnel) or `METHOD http://host[:port]/path HTTP/1.1`. */
function parseRequest(line: string): Request {
  const [method, target, version] = line.split(' ');
  if (!method || !target || !version?.startsWith('HTTP/')) return { refused: `not an HTTP request line: ${JSON.stringify(line.slice(0, 200))}` };
  if (method === 'CONNECT') {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(target);
    if (!m || Number(m[2]) > 65535) return { refused: `CONNECT wants host:port, got ${JSON.stringify(target.slice(0, 200))}` };
    return { method, host: m[1]!, port: Number(m[2]), path: null };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { refused: `${method} wants an absolute http:// URL through a proxy, got ${JSON.stringify(target.slice(0, 200))}` };
  }
  if (url.protocol !== 'http:') return { refused: `only http:// is forwarded as a request (https goes through CONNECT), got ${url.protocol}` };
  return { method, host: url.hostname, port: Number(url.port || 80), path: `${url.pathname}${url.search}` };
}

/** The request as the server wants it: origin-form, its hop-by-hop headers dropped, one request per connection. */
function originForm(method: string, path: string, headers: string[]): string {
  const hopByHop = /^(proxy-connection|proxy-authorization|connection|keep-alive):/i;
  return [`${method} ${path} HTTP/1.1`, ...headers.filter((h) => !hopByHop.test(h)), 'Connection: close', '', ''].join('\r\n');
}

/** One status line and one line of reason, then the end of the connection. */
function answer(client: Socket, status: number, reason: string): void {
  const body = `${reason}\n`;
  const text = { 400: 'Bad Request', 403: 'Forbidden', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway', 503: 'Service Unavailable' }[status] ?? 'Error';
  if (!client.destroyed) client.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

const proxies = new Map<string, SandboxProxy>();

/** This process's proxy for `allow`, started on first use; every one stops and its folder goes when the process exits. */
export function sandboxProxySocket(allow: readonly string[]): string {
  const key = [...allow].sort().join(' ');
  let proxy = proxies.get(key);
  if (!proxy) {
    if (!proxies.size) process.once('exit', stopSandboxProxies);
    proxy = new SandboxProxy(allow);
    proxies.set(key, proxy);
  }
  return proxy.start();
}

export function stopSandboxProxies(): void {
  for (const p of proxies.values()) p.stop();
  proxies.clear();
}
