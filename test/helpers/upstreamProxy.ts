/**
 * A small forward proxy on 127.0.0.1, standing in for the corporate proxy a host reaches the internet through
 * (the daemon's HTTPS_PROXY / HTTP_PROXY), which Maestro's sandbox proxy chains to: `CONNECT host:port` opens a
 * tunnel there, a plain request in absolute form (`GET http://host:port/path`) is sent on. It keeps what it was
 * asked for and the `Proxy-Authorization` each request carried, and answers 407 to one without `credentials`
 * (when given). `answerFor` may answer a tunnel itself (an address this machine has no route to stands for a
 * public server): a string is what the far end says, then it ends.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface UpstreamSeen {
  /** `CONNECT host:port` or `GET http://host:port/path`. */
  line: string;
  auth: string | null;
}

export interface TestUpstream {
  url: string;
  seen: UpstreamSeen[];
  close(): Promise<void>;
}

export async function startUpstreamProxy(opts: { credentials?: string; answerFor?: (target: string) => string | null } = {}): Promise<TestUpstream> {
  const seen: UpstreamSeen[] = [];
  const sockets = new Set<Socket>();
  const expected = opts.credentials ? `Basic ${Buffer.from(opts.credentials).toString('base64')}` : null;
  const server: Server = createServer((req, res) => {
    seen.push({ line: `${req.method} ${req.url}`, auth: req.headers['proxy-authorization'] ?? null });
    if (expected && req.headers['proxy-authorization'] !== expected) return void res.writeHead(407).end('credentials wanted\n');
    const url = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const out = httpRequest({ host: url.hostname, port: url.port || 80, path: `${url.pathname}${url.search}`, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', (err) => res.writeHead(502).end(`${err.message}\n`));
    req.pipe(out);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    seen.push({ line: `CONNECT ${req.url}`, auth: req.headers['proxy-authorization'] ?? null });
    if (expected && req.headers['proxy-authorization'] !== expected) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
    const own = opts.answerFor?.(req.url ?? '');
    if (own !== null && own !== undefined) return void client.end(`HTTP/1.1 200 Connection established\r\n\r\n${own}`);
    const at = (req.url ?? '').lastIndexOf(':');
    const far = connect({ host: (req.url ?? '').slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number((req.url ?? '').slice(at + 1)) });
    far.on('error', () => client.destroy());
    client.on('close', () => far.destroy());
    far.once('connect', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (head.length) far.write(head);
      far.pipe(client);
      client.pipe(far);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
