/**
 * ApiClient: how the CLI and the MCP server talk to a running daemon. Plain
 * fetch; the base URL comes from --url, MAESTRO_URL, else
 * http://127.0.0.1:<MAESTRO_PORT>, else where the daemon of MAESTRO_HOME
 * listens (its daemon.url), else :4300; the token from MAESTRO_TOKEN, else
 * from `$MAESTRO_HOME/token` — but that file only for a daemon on this
 * machine's loopback, so the local secret never travels to another host, and
 * no token goes to a loopback port another user's program holds (portOwner.ts). Every
 * request says `X-Maestro-Client` (the daemon takes a bodyless write only with
 * it or a JSON content type) and carries no Origin. An API
 * error becomes a MaestroError with the API's own code and message, so the
 * CLI prints exactly what the API said; a daemon that does not answer is
 * DAEMON_UNREACHABLE with a message saying how to start one. Something else
 * that answers (a web server, a proxy's page, another program on the port) is
 * NOT_A_DAEMON, saying what came back: its answer never reaches a command,
 * which would trip over the missing fields with a JavaScript error, and its
 * error page is not taken for the daemon's refusal.
 */
import { clientTokenSource, daemonUrlFromEnv, defaultDaemonUrl } from '../config/env.js';
import { refuseForeignListener } from '../lib/portOwner.js';
import { ERROR_CATALOGUE, MaestroError, coerceError, type ErrorCode } from '../core/errors.js';
import type { ProjectDetail, ProjectList } from './wire/responses.js';

export interface ClientOptions {
  url?: string;
  token?: string | null;
}

export function resolveApiUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw = flag || defaultDaemonUrl(env);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MaestroError('BAD_INPUT', `The daemon URL "${raw}" (from ${flag ? '--url' : daemonUrlFromEnv(env) ? 'MAESTRO_URL' : 'MAESTRO_PORT'}) is not a URL; expected e.g. http://127.0.0.1:4300.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MaestroError('BAD_INPUT', `The daemon URL "${raw}" must be http:// or https://.`);
  return raw.replace(/\/+$/, '');
}

export type Query = Record<string, string | number | boolean | undefined | null>;

/** One server-sent event as the daemon sends it: `id` is `<runId>:<seq>`. */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/**
 * The mark of a Maestro daemon's answer: every response carries a trace id (server.ts, SSE included), and a
 * plain web server's carries none. An existing header, so a newer CLI still knows an older daemon.
 */
const DAEMON_MARK = 'x-trace-id';

/** At most this much of a foreign answer goes into the error: enough to recognise an HTML page or a JSON error. */
const SHOWN_CHARS = 80;

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CATALOGUE, code);
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly token: string | null;
  /** Where the token came from, said with a refusal of it (clientTokenSource). */
  private readonly tokenFrom: string | null;

  constructor(options: ClientOptions = {}, env: NodeJS.ProcessEnv) {
    this.baseUrl = resolveApiUrl(options.url, env);
    const source = options.token ? null : clientTokenSource(new URL(this.baseUrl), env);
    this.token = source ? source.token : options.token!;
    this.tokenFrom = source?.from ?? null;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'x-maestro-client': 'cli', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...extra };
  }

  url(path: string, query: Query = {}): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
    const s = qs.toString();
    return `${this.baseUrl}${path}${s ? `?${s}` : ''}`;
  }

  private unreachable(err: unknown): MaestroError {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    return new MaestroError('DAEMON_UNREACHABLE', `No Maestro daemon answers at ${this.baseUrl} (${why}). Start one with \`maestro serve\`, or point --url / MAESTRO_URL at a running daemon.`, { cause: err });
  }

  /** Something answered, but not as a daemon: what came back, quoted (JSON.stringify escapes line breaks and escapes). */
  private async notADaemon(method: string, path: string, res: Response, text?: string): Promise<MaestroError> {
    const body = text ?? (await res.text().catch(() => ''));
    const type = res.headers.get('content-type') ?? 'no content type';
    const start = body ? `, starting ${JSON.stringify(body.slice(0, SHOWN_CHARS))}` : ', empty';
    const message = `${this.baseUrl} does not answer as a Maestro daemon: ${method} ${path} got HTTP ${res.status} (${type}${start}). Point --url / MAESTRO_URL at the address \`maestro serve\` printed, or start a daemon with \`maestro serve\`.`;
    return new MaestroError('NOT_A_DAEMON', message, { details: { status: res.status, contentType: type } });
  }

  /** Sends a request; returns the response, throwing the API's error for any non-2xx. */
  async raw(method: string, path: string, options: { query?: Query; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    // Asked on every request, not once: `maestro mcp` and `task logs --follow` outlive a daemon's stop.
    if (this.token) refuseForeignListener(new URL(this.baseUrl));
    let res: Response;
    try {
      res = await fetch(this.url(path, options.query), {
        method,
        headers: this.headers({ ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers }),
        body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
        signal: options.signal,
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw this.unreachable(err);
    }
    if (res.ok) {
      if (!res.headers.has(DAEMON_MARK)) throw await this.notADaemon(method, path, res);
      return res;
    }
    const text = await res.text().catch(() => '');
    let body: { error?: { code?: unknown; message?: unknown; details?: Record<string, unknown> } } = {};
    try {
      body = JSON.parse(text) ?? {};
    } catch {
      // not JSON: keep the text below
    }
    const code = body.error?.code;
    // A daemon's refusal carries its mark, or at least its error shape (those written before its hooks run: a request
    // that is not valid HTTP, api/errors.ts): an error page without either (a web server's 404, a proxy's 502) is not
    // one, and said as such rather than as the daemon's NOT_FOUND or INTERNAL.
    if (!res.headers.has(DAEMON_MARK) && typeof code !== 'string') throw await this.notADaemon(method, path, res, text);
    const said = typeof body.error?.message === 'string' ? body.error.message : `${method} ${path} answered HTTP ${res.status}${text ? `: ${text.slice(0, 300)}` : ''}`;
    const message = res.status === 401 && this.tokenFrom ? `${said} Here, ${this.tokenFrom}.` : said;
    const details = { ...(body.error?.details ?? {}), status: res.status, ...(typeof code === 'string' ? { apiCode: code } : {}) };
    throw new MaestroError(isErrorCode(code) ? code : res.status === 401 ? 'UNAUTHORIZED' : res.status === 404 ? 'NOT_FOUND' : 'INTERNAL', message, { details });
  }

  async request<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    const res = await this.raw(method, path, options);
    const text = await res.text();
    if (!text) return {} as T;
    // Every answer the daemon gives here is JSON: anything else came from something in front of it or in its place.
    if (/^application\/json\b/i.test(res.headers.get('content-type') ?? '')) {
      try {
        return JSON.parse(text) as T;
      } catch {
        // cut short or not JSON after all: said below
      }
    }
    throw await this.notADaemon(method, path, res, text);
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  /**
   * Null when a Maestro daemon answers its health check, else why not: DAEMON_UNREACHABLE when nothing answers,
   * NOT_A_DAEMON (quoting what came back) when something else does. A daemon that refuses our token still is
   * one: the caller's next request then fails with the daemon's own 401, which says where the token is.
   */
  async probe(): Promise<Error | null> {
    try {
      await this.get('/api/health');
      return null;
    } catch (err) {
      if (err instanceof MaestroError && err.code === 'UNAUTHORIZED' && err.details?.apiCode === 'UNAUTHORIZED') return null;
      return coerceError(err);
    }
  }

  /** True only when a Maestro daemon answers its health check (probe); anything else on the port is not one. */
  async ping(): Promise<boolean> {
    return (await this.probe()) === null;
  }

  /**
   * Reads an SSE stream until it ends or `signal` aborts, calling `onEvent`
   * for each event. Returns normally when the server closes the stream.
   */
  async readSse(path: string, options: { lastEventId?: string | null; signal?: AbortSignal; onOpen?: () => void; onEvent: (e: SseEvent) => void | Promise<void> }): Promise<void> {
    const res = await this.raw('GET', path, { headers: { accept: 'text/event-stream', ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}) }, signal: options.signal });
    options.onOpen?.();
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    let current: SseEvent = { id: null, event: 'message', data: '' };
    let dataLines: string[] = [];
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            // A caller that aborted (in an event's handler, say) asked for no more: the chunk's other events stay unread.
            options.signal?.throwIfAborted();
            if (dataLines.length) await options.onEvent({ ...current, data: dataLines.join('\n') });
            current = { id: null, event: 'message', data: '' };
            dataLines = [];
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') current.id = value;
          else if (field === 'event') current.event = value;
          else if (field === 'data') dataLines.push(value);
        }
      }
    } catch (err) {
      // The connection dropped mid-stream (the daemon stopped): the caller may reconnect.
      if ((err as Error).name === 'AbortError' || options.signal?.aborted) throw err;
      throw this.unreachable(err);
    }
  }
}

/** A project by id, or else by exact name. */
export async function findProject(client: ApiClient, idOrName: string): Promise<ProjectDetail> {
  try {
    return await client.get(`/api/projects/${encodeURIComponent(idOrName)}`);
  } catch (err) {
    if (!(err instanceof MaestroError) || (err.code !== 'UNKNOWN_PROJECT' && err.code !== 'NOT_FOUND')) throw err;
  }
  const { projects } = await client.get<ProjectList>('/api/projects');
  const byName = projects.find((p) => p.name === idOrName);
  if (!byName) throw new MaestroError('UNKNOWN_PROJECT', `No project has the id or name "${idOrName}". \`maestro project list\` shows them.`);
  return client.get(`/api/projects/${encodeURIComponent(byName.id)}`);
}
