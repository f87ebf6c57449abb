/**
 * The proxy the host itself reaches out through (a corporate proxy: the daemon's HTTPS_PROXY, HTTP_PROXY and
 * NO_PROXY, read once into the config, src/config/sandbox.ts), which the sandbox's proxy (proxy.ts) then goes through
 * in its turn: a tunnel (`CONNECT`) through HTTPS_PROXY, else HTTP_PROXY; a plain `http://` request forwarded to
 * HTTP_PROXY as it came (absolute form), or straight to its server when only HTTPS_PROXY is set, as curl does. A
 * destination NO_PROXY names is connected to directly. Its credentials (`http://user:pass@proxy:3128`) go to it as
 * `Proxy-Authorization: Basic`: the sandbox never sees them, and no message shows them (`shownProxy`).
 *
 * Only `http://` proxies: the daemon's config refuses another scheme by name when "proxied" would use it.
 */
import { connect, isIPv4, type Socket } from 'node:net';
import { inV4Block } from './addresses.js';

export interface UpstreamProxy {
  /** For tunnels: `http://[user:pass@]host:port`. */
  https?: string;
  /** For plain `http://` requests (and tunnels when `https` is absent). */
  http?: string;
  /** NO_PROXY's entries, lower-case: `*`, a host, `.domain` or `*.domain` (its subdomains too), an IPv4 CIDR; each may end in `:port`. */
  noProxy: string[];
}

/** A proxy URL as a message may show it: without its credentials. */
export function shownProxy(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}

/** The `Proxy-Authorization` header line the proxy's URL carries credentials for, or none. */
export function proxyAuthorization(url: URL): string[] {
  if (!url.username && !url.password) return [];
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return [`Proxy-Authorization: Basic ${Buffer.from(pair).toString('base64')}`];
}

/** Whether one NO_PROXY entry covers `host` (lower-case, no brackets) on `port`. */
function covers(entry: string, host: string, port: number): boolean {
  const at = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[(.*)\]/, '$1'))!;
  const [name, entryPort] = [at[1]!, at[2]];
  if (entryPort && Number(entryPort) !== port) return false;
  if (name === '*') return true;
  const cidr = /^(\d+\.\d+\.\d+\.\d+)\/(\d{1,2})$/.exec(name);
  if (cidr) {
    return isIPv4(host) && isIPv4(cidr[1]!) && inV4Block(host, cidr[1]!, Number(cidr[2]));
  }
  const domain = name.replace(/^\*?\./, '');
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * The upstream proxy for a connection to `hosts` (the name asked for, and the address it goes to when that is
 * not the name) on `port`: a tunnel or a plain request. Null: straight there (no upstream, or NO_PROXY names one of them).
 */
export function upstreamFor(upstream: UpstreamProxy | undefined, hosts: readonly string[], port: number, tunnel: boolean): URL | null {
  const url = tunnel ? upstream?.https ?? upstream?.http : upstream?.http;
  if (!upstream || !url) return null;
  if (upstream.noProxy.some((entry) => hosts.some((h) => covers(entry, h.toLowerCase(), port)))) return null;
  return new URL(url);
}

/** `host:port` as a request line names it: an IPv6 address in brackets. */
export const authority = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * A tunnel to `host:port` through the upstream proxy at `proxy`: the socket once it answered 200 to our CONNECT,
 * with whatever it sent past its answer unshifted back. Rejects with one line saying what the upstream answered.
 */
export function tunnelThrough(proxy: URL, host: string, port: number, timeoutMs: number): Promise<Socket> {
  const target = authority(host, port);
  const where = `the upstream proxy ${shownProxy(proxy.href)}`;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: proxy.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(proxy.port || 80) });
    let head = Buffer.alloc(0);
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(`${where}: ${why}`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no answer to CONNECT ${target} within ${timeoutMs / 1000} s`));
    socket.once('error', (err) => fail((err as NodeJS.ErrnoException).code ?? err.message));
    socket.once('connect', () => socket.write([`CONNECT ${target} HTTP/1.1`, `Host: ${target}`, ...proxyAuthorization(proxy), '', ''].join('\r\n')));
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return head.length > 16 * 1024 ? fail(`an answer to CONNECT ${target} over 16 KiB`) : undefined;
      socket.off('data', onData);
      const status = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      if (!/^HTTP\/1\.[01] 2\d\d/.test(status)) return fail(`CONNECT ${target}: ${status.slice(0, 200)}`);
      socket.pause();
      socket.setTimeout(0);
      if (end + 4 < head.length) socket.unshift(head.subarray(end + 4));
      resolve(socket);
    };
    socket.on('data', onData);
  });
}
