/**
 * The proxy a sandbox with `agentSandbox.network: "proxied"` reaches the outside through (the relay inside the
 * sandbox, relay.ts, hands it each connection over a Unix socket bound into the sandbox). It runs outside every
 * sandbox, one per process that starts sandboxes (the worker for agents and checks, the daemon for hooks) and allow
 * list, started on first use; its socket lies in a private folder (0700) removed when the process exits.
 *
 * It takes `CONNECT host:port` and plain-HTTP absolute-form requests (`GET http://host/path`, forwarded as the
 * first and only request on its connection: `Connection: close` both ways, heads.ts). It resolves the host itself
 * and connects to the address it checked (a second lookup could answer otherwise), allowing public addresses on ports
 * 443 and 80 and refusing the rest (addresses.ts) with a 403 and one line saying why. An `allow` entry ("host:port")
 * lets through what the request names as it names it, whatever that resolves to; one that is an IP address also
 * lets through a name that resolves to that address (to it and no other: the same server on the same port).
 *
 * Where the host itself goes out through a proxy (the daemon's HTTPS_PROXY, HTTP_PROXY, NO_PROXY; upstream.ts),
 * it goes through that one after the same checks, of what this host resolves the name to: the upstream gets the
 * name as asked (its own rules by name, its own lookup), or the allowed address an IP entry matched. A name this
 * host cannot resolve is refused unless `allow` names it. It adds only the upstream's credentials, which the
 * sandbox never sees.
 */
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blockedAddressKind } from './addresses.js';
import { answer, forwardedRequest, parseRequest, relayAnswer } from './heads.js';
import { authority, tunnelThrough, upstreamFor, type UpstreamProxy } from './upstream.js';

export interface ProxyLimits {
  /** Connections open at once; one more is answered 503. */
  maxConnections: number;
  /** A tunnel with no byte either way for this long is closed. */
  idleMs: number;
  /** The request head must arrive within this (else 408), and within maxHeadBytes (else 431). */
  headMs: number;
  maxHeadBytes: number;
}

export const PROXY_LIMITS: ProxyLimits = { maxConnections: 256, idleMs: 10 * 60_000, headMs: 30_000, maxHeadBytes: 16 * 1024 };

const PUBLIC_PORTS = new Set([443, 80]);

/**
 * A destination: `name` as the request named it (no brackets), `address` where a direct connection goes (the
 * address checked, or the allowed name itself), `asked` what an upstream proxy is asked for; or why not (the 403's line).
 */
type Decision = { name: string; address: string; asked: string; port: number } | { refused: string };

/** "host:port" as a request or the allow list names it: lower-case, an IPv6 host without its brackets and in its shortest form. */
export function destinationKey(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return `${isIP(bare) === 6 && URL.canParse(`http://[${bare}]`) ? new URL(`http://[${bare}]`).hostname.slice(1, -1) : bare}:${port}`;
}

export class SandboxProxy {
  private server: Server | null = null;
  private folder: string | null = null;
  private readonly open = new Set<Socket>();
  private readonly allow: Set<string>;

  constructor(allow: readonly string[], private readonly upstream?: UpstreamProxy, private readonly limits: ProxyLimits = PROXY_LIMITS) {
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
    client.on('error', () => client.destroy());
    if (this.open.size >= this.limits.maxConnections) {
      answer(client, 503, `maestro sandbox proxy: ${this.limits.maxConnections} connections are open already`);
      return;
    }
    this.open.add(client);
    client.on('close', () => this.open.delete(client));
    // A deadline, not an idle timer: a head sent a byte at a time must not hold a connection for ever.
    const late = setTimeout(() => answer(client, 408, `maestro sandbox proxy: no whole request head within ${this.limits.headMs / 1000} s`), this.limits.headMs);
    late.unref();
    client.once('close', () => clearTimeout(late));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > this.limits.maxHeadBytes) {
          client.off('data', onData);
          clearTimeout(late);
          answer(client, 431, `maestro sandbox proxy: the request head is over ${this.limits.maxHeadBytes} bytes`);
        }
        return;
      }
      client.off('data', onData);
      clearTimeout(late);
      client.pause();
      this.serve(client, head.subarray(0, end).toString('latin1').split('\r\n'), head.subarray(end + 4)).catch(() => client.destroy());
    };
    client.on('data', onData);
  }

  private async serve(client: Socket, lines: string[], rest: Buffer): Promise<void> {
    const request = parseRequest(lines[0] ?? '');
    if ('refused' in request) return answer(client, 400, `maestro sandbox proxy: ${request.refused}`);
    const to = await this.decide(request.host, request.port);
    if ('refused' in to) {
      for (const hear of refusalListeners) hear(`${authority(request.host.replace(/^\[(.*)\]$/, '$1'), request.port)} refused: ${to.refused}`);
      return answer(client, 403, `maestro sandbox proxy: ${to.refused}`);
    }
    const tunnel = request.path === null;
    const via = upstreamFor(this.upstream, [to.name, to.address], to.port, tunnel);
    let server: Socket;
    try {
      server = await this.reach(to, via, tunnel);
    } catch (err) {
      return answer(client, 502, `maestro sandbox proxy: ${authority(to.name, to.port)}: ${(err as Error).message}`);
    }
    if (client.destroyed) {
      server.destroy();
      return;
    }
    // Its end reaches the client through the pipe; an error, or the client gone, ends both (stop() ends every client).
    client.on('close', () => server.destroy());
    server.on('error', () => client.destroy());
    if (tunnel) {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      server.pipe(client);
    } else {
      server.write(forwardedRequest(request.method, via ? to.asked : to.name, to.port, request.path!, lines.slice(1), via));
      relayAnswer(server, client, this.limits.maxHeadBytes);
    }
    if (rest.length) server.write(rest);
    for (const s of [client, server]) s.setTimeout(this.limits.idleMs, () => client.destroy());
    client.pipe(server);
    client.resume();
    server.resume();
  }

  /** A connection to the destination: straight there, a tunnel through the upstream proxy, or that proxy for a plain request. */
  private reach(to: Exclude<Decision, { refused: string }>, via: URL | null, tunnel: boolean): Promise<Socket> {
    if (via && tunnel) return tunnelThrough(via, to.asked, to.port, this.limits.headMs);
    const [host, port, what] = via ? [via.hostname.replace(/^\[(.*)\]$/, '$1'), Number(via.port || 80), 'the upstream proxy: '] : [to.address, to.port, ''];
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.once('error', (err) => reject(new Error(`${what}${(err as NodeJS.ErrnoException).code ?? err.message}`)));
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        socket.pause();
        resolve(socket);
      });
    });
  }

  /**
   * Where `host:port` may be reached, or why not: the allow list by name, else every address it resolves to allowed
   * by an IP entry or public (and then only on 443 or 80).
   */
  private async decide(host: string, port: number): Promise<Decision> {
    const name = host.replace(/^\[(.*)\]$/, '$1');
    if (this.allow.has(destinationKey(host, port))) return { name, address: name, asked: name, port };
    // As the entry is written: an IPv6 address in brackets.
    const listIt = `; list "${authority(name.toLowerCase(), port)}" in agentSandbox.allow to let the sandbox reach it`;
    const portRefused = { refused: `port ${port} is refused (only 443 and 80 go out)${listIt}` };
    if (!PUBLIC_PORTS.has(port) && ![...this.allow].some((a) => a.endsWith(`:${port}`))) return portRefused;
    let addresses: string[];
    try {
      addresses = (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      return { refused: `${name} does not resolve: ${(err as NodeJS.ErrnoException).code ?? String(err)}${listIt}` };
    }
    const allowed = addresses.find((a) => this.allow.has(destinationKey(a, port)));
    if (allowed) return { name, address: allowed, asked: allowed, port };
    if (!PUBLIC_PORTS.has(port)) return portRefused;
    for (const address of addresses) {
      const kind = blockedAddressKind(address);
      if (kind) return { refused: `${name} is ${address}, ${kind}: out of the sandbox's reach${listIt}` };
    }
    if (!addresses[0]) return { refused: `${name} does not resolve${listIt}` };
    return { name, address: addresses[0], asked: name, port };
  }
}

/** Who hears of each destination a proxy of this process refuses (executor/run.ts: the run's stream says it). */
const refusalListeners = new Set<(refusal: string) => void>();

/**
 * Tells `listener` of every refusal ("host:port refused: why") until the returned function is called. A tool may
 * not pass the proxy's reason on: Gemini CLI says only "fetch failed", after minutes of retries.
 */
export function onSandboxProxyRefusal(listener: (refusal: string) => void): () => void {
  refusalListeners.add(listener);
  return () => refusalListeners.delete(listener);
}

const proxies = new Map<string, SandboxProxy>();

/** This process's proxy for `allow` and `upstream`, started on first use; every one stops and its folder goes when the process exits. */
export function sandboxProxySocket(allow: readonly string[], upstream?: UpstreamProxy): string {
  const key = JSON.stringify([[...allow].sort(), upstream ?? null]);
  let proxy = proxies.get(key);
  if (!proxy) {
    if (!proxies.size) process.once('exit', stopSandboxProxies);
    proxy = new SandboxProxy(allow, upstream);
    proxies.set(key, proxy);
  }
  return proxy.start();
}

export function stopSandboxProxies(): void {
  for (const p of proxies.values()) p.stop();
  proxies.clear();
}
