/**
 * The API's front door: four checks on every request, WebSocket upgrades
 * included, before any route runs (in this order):
 *
 * 1. Host. A DNS-rebinding page reaches 127.0.0.1 under its own name
 *    (`Host: evil.example:4300`) and can read our answers, so only names that
 *    cannot be rebound pass, and a refusal does not list the others:
 *    loopback (127.0.0.1, localhost, [::1]), the bound host when it is not
 *    loopback (the machine's own addresses and name when it is a wildcard such
 *    as 0.0.0.0), and the configured `allowedHosts`. The port is not compared:
 *    it is not what rebinding changes, and an SSH forward (`-L 8000:…:4300`)
 *    must keep working.
 * 2. Origin. A request that carries one (browsers send it on every
 *    cross-origin request and on same-origin writes) must come from the page
 *    the daemon itself serves — Origin's host:port equal to the (already
 *    checked) Host — or from a configured `allowedOrigins`. `Origin: null`
 *    (sandboxed frames, file://) never passes.
 * 3. Token. Every route but the board's static files needs the daemon's
 *    token: `Authorization: Bearer …` (any case), or `?token=` on the GET of a
 *    stream (EventSource and WebSocket cannot set headers; anywhere else a
 *    token in a URL only ends up in histories and proxy logs, so it counts for
 *    nothing there). A GET of a board page with `?token=` (the link `maestro
 *    serve` prints) is served once the token is checked: the page keeps it in
 *    its origin's storage and drops it from the address bar (web/index.html),
 *    its route (`#/task/…`) kept. A token given twice is checked too (every
 *    copy must be the token).
 *    No cookie: a browser sends a host's cookies to every port of it, so the
 *    board's cookie (the token) went to any other server on 127.0.0.1 the
 *    person opened, an agent's dev server included. The cookie older boards
 *    set counts for nothing and is cleared wherever it is sent.
 * 4. Content type. A write (any method but GET/HEAD/OPTIONS) must say
 *    `Content-Type: application/json`, or carry no body and an
 *    `X-Maestro-Client` header. Neither is possible for a "simple"
 *    cross-site request (a form post, text/plain, a bodyless fetch in
 *    no-cors mode), so none reaches a route even if the other checks were
 *    opened up by configuration.
 *
 * A refusal is 403 (Host, Origin), 401 (token) or 415 (content type) in the
 * documented shape, and nothing runs.
 */
import { timingSafeEqual } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MaestroConfig } from '../config/config.js';
import { MaestroError } from '../core/errors.js';

export type GuardConfig = Pick<MaestroConfig, 'host' | 'port' | 'token' | 'allowedHosts' | 'allowedOrigins'>;

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);

/** The host names a request may carry in its Host header (lowercase, IPv6 without brackets). */
export function allowedHostNames(config: Pick<GuardConfig, 'host' | 'allowedHosts'>): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '::1']);
  const bound = stripBrackets(config.host.toLowerCase());
  if (WILDCARDS.has(bound)) {
    // Bound to every interface: the machine's own addresses and name are its own, not a rebinding.
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase().split('%')[0]!);
  } else {
    names.add(bound);
  }
  for (const h of config.allowedHosts) names.add(stripBrackets(h.toLowerCase()));
  return names;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** `name[:port]` or `[v6][:port]`, nothing else (no userinfo, path or spaces a lenient URL parser would skip). */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;

/** The host name of a Host header value (`[::1]:4300` → `::1`), lowercase, or null when it is not one. */
export function hostNameOf(header: string | undefined): string | null {
  const m = HOST_HEADER.exec(header ?? '');
  return m ? stripBrackets(m[1]!.toLowerCase()) : null;
}

function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Board files and the board's own pages: anything not under /api that a route serves. */
function isPublic(req: FastifyRequest): boolean {
  const path = req.url.split('?')[0]!.toLowerCase();
  const route = req.routeOptions.url;
  return route !== undefined && !route.startsWith('/api') && path !== '/api' && !path.startsWith('/api/');
}

export function installGuard(app: FastifyInstance, config: GuardConfig): void {
  const hosts = allowedHostNames(config);
  const origins = new Set(config.allowedOrigins);
  const port = () => {
    const addr = app.server.address();
    return typeof addr === 'object' && addr ? addr.port : config.port;
  };
  const refuse = (req: FastifyRequest, reply: FastifyReply, err: MaestroError) => {
    // A refused WebSocket upgrade keeps its socket outside the HTTP server's
    // bookkeeping; close it once the answer is written, or it lingers forever.
    if (req.headers.upgrade) reply.raw.once('finish', () => req.raw.socket.destroy());
    if (err.status === 401) reply.header('www-authenticate', 'Bearer realm="maestro"');
    return reply.code(err.status).header('connection', 'close').send({ error: err.toJSON() });
  };

  app.addHook('onRequest', async (req, reply) => {
    const host = hostNameOf(req.headers.host);
    if (!host || !hosts.has(host)) {
      return refuse(req, reply, new MaestroError('FORBIDDEN', `Host "${req.headers.host ?? ''}" is not this daemon's: it answers to 127.0.0.1, localhost, [::1] and the names it is configured with. To reach it under another name (a reverse proxy, a LAN name), add the name to allowedHosts in $MAESTRO_HOME/config.json or MAESTRO_ALLOWED_HOSTS.`));
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin) && !sameOrigin(origin, req.headers.host!)) {
      return refuse(req, reply, new MaestroError('FORBIDDEN', `Origin "${origin}" may not call this daemon: only its own board (${req.headers.host}) may. To let another page in, add its origin to allowedOrigins in $MAESTRO_HOME/config.json or MAESTRO_ALLOWED_ORIGINS.`));
    }
    const oldCookie = `maestro_token_${port()}`;
    if (readCookie(req.headers.cookie, oldCookie) !== undefined) reply.header('set-cookie', `${oldCookie}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    const denied = checkToken(req, config.token);
    if (denied) return refuse(req, reply, denied);
    const badType = checkContentType(req);
    if (badType) return refuse(req, reply, badType);
  });
}

function sameOrigin(origin: string, host: string): boolean {
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && o.host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

/** The routes whose clients cannot send headers (WebSocket, EventSource): the only API routes that take `?token=`. */
const STREAM_ROUTES = new Set(['/api/ws', '/api/tasks/:taskId/stream']);

/** Every `?token=` of a query: one, or each copy of a repeated one (the query parser makes those an array). */
function tokensIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Null when the request may go on; else the refusal. */
function checkToken(req: FastifyRequest, token: string | null): MaestroError | null {
  const query = req.query as Record<string, unknown>;
  const linkOrStream = isPublic(req) || STREAM_ROUTES.has(req.routeOptions.url ?? '');
  const sent = req.method === 'GET' && linkOrStream ? tokensIn(query.token) : [];
  const fromQuery = sent.length === 1 ? sent[0] : undefined;
  // No route ever sees the secret (several refuse unknown query keys).
  delete query.token;
  if (isPublic(req)) {
    // A link with the token twice (`?token=T&token=T`) was served as it was, the token left in the address bar.
    if (sent.length === 0) return null;
    if (token !== null && !sent.every((t) => tokenMatches(t, token))) {
      return unauthorized(sent.length > 1 ? `This link gives a token ${sent.length} times, and not every one is this daemon's.` : 'The token in this link is not this daemon\'s.');
    }
    return null;
  }
  if (token === null) return null;
  const bearer = /^bearer\s+(.+?)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const given = [bearer, fromQuery].filter((t): t is string => t !== undefined);
  if (given.some((t) => tokenMatches(t, token))) return null;
  return unauthorized(given.length ? 'The token sent is not this daemon\'s.' : 'No token was sent.');
}

function unauthorized(why: string): MaestroError {
  return new MaestroError('UNAUTHORIZED', `${why} Send the daemon's token, from the file $MAESTRO_HOME/token (default ~/.maestro/token) or MAESTRO_TOKEN if the daemon was started with it, as "Authorization: Bearer <token>"; in a browser, open the board link \`maestro serve\` printed.`);
}

function checkContentType(req: FastifyRequest): MaestroError | null {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return null;
  const type = req.headers['content-type'];
  if (type === undefined) {
    if (req.headers['x-maestro-client'] !== undefined) return null;
    return new MaestroError('UNSUPPORTED_MEDIA_TYPE', `${req.method} needs "Content-Type: application/json" (a body of {} will do) or, without a body, an "X-Maestro-Client" header.`);
  }
  const media = type.split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json') return null;
  return new MaestroError('UNSUPPORTED_MEDIA_TYPE', `The API takes JSON bodies only ("Content-Type: application/json"), got "${media}".`);
}
