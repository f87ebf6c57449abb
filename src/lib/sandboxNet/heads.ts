/**
 * The HTTP heads the sandbox's proxy (proxy.ts) reads and writes: the request line it is asked with, a plain
 * `http://` request as it goes on (to the server: origin form; to an upstream proxy: as it came, with that proxy's
 * credentials), the server's answer as it goes back (saying `Connection: close`), and its own one-line answers.
 */
import type { Socket } from 'node:net';
import { proxyAuthorization } from './upstream.js';

export type Request = { method: string; host: string; port: number; path: string | null } | { refused: string };

/** `CONNECT host:port HTTP/1.1` (path null: a tunnel) or `METHOD http://host[:port]/path HTTP/1.1`. */
export function parseRequest(line: string): Request {
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

/** Headers that concern one hop only: the client's to this proxy, or the server's connection to it. */
const HOP_BY_HOP = /^(proxy-connection|proxy-authorization|connection|keep-alive):/i;

/**
 * A plain request as it goes on: origin form to the server itself, or, to an upstream proxy (`via`), absolute form
 * to `host:port` with that proxy's credentials. The client's hop-by-hop headers dropped, one request per connection.
 */
export function forwardedRequest(method: string, host: string, port: number, path: string, headers: string[], via: URL | null): string {
  const target = via ? `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}` : path;
  const kept = headers.filter((h) => !HOP_BY_HOP.test(h));
  return [`${method} ${target} HTTP/1.1`, ...kept, ...(via ? proxyAuthorization(via) : []), 'Connection: close', '', ''].join('\r\n');
}

/**
 * Copies a plain request's answer from `server` to `client`, its head saying `Connection: close`: the proxy serves
 * one request a connection, so a keep-alive client must open another for its next one (sent down this one, it would
 * reach this server whatever host it named) even when the server ignored the request's own `Connection: close`.
 * Interim answers (100 Continue) and a protocol switch (101) pass as they are.
 */
export function relayAnswer(server: Socket, client: Socket, maxHeadBytes: number): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    for (;;) {
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > maxHeadBytes) client.destroy();
        return;
      }
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const status = lines[0] ?? '';
      if (/^HTTP\/1\.[01] 1\d\d/.test(status) && !/^HTTP\/1\.[01] 101/.test(status)) {
        client.write(head.subarray(0, end + 4));
        head = head.subarray(end + 4);
        continue;
      }
      server.off('data', onData);
      server.off('end', cut);
      if (/^HTTP\/1\.[01] 101/.test(status)) {
        client.write(head);
      } else {
        client.write([status, ...lines.slice(1).filter((h) => !HOP_BY_HOP.test(h)), 'Connection: close', '', ''].join('\r\n'));
        if (end + 4 < head.length) client.write(head.subarray(end + 4));
      }
      server.pipe(client);
      return;
    }
  };
  // Ended before its answer's head was whole: so does the client's connection.
  const cut = () => client.end();
  server.on('data', onData);
  server.once('end', cut);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 403: 'Forbidden', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

/** One status line and one line of reason, then the end of the connection. */
export function answer(client: Socket, status: number, reason: string): void {
  const body = `${reason}\n`;
  if (!client.destroyed && !client.writableEnded) {
    client.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
}
