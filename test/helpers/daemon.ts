/**
 * A real daemon for tests: temporary MAESTRO_HOME, port 0, logs discarded (or
 * kept in memory). The one place tests get the daemon's token: `app.inject`
 * sends it unless a test gives its own Authorization header, `fetch` and
 * `wsUrl` carry it, and a CLI child pointed at the daemon's home reads it
 * from `$MAESTRO_HOME/token` like a user's would.
 */
import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { resolveConfig, type MaestroConfig } from '../../src/config/config.js';
import { startDaemon, type Daemon, type DaemonOptions } from '../../src/app/daemon.js';
import type { Task, TaskStatus } from '../../src/core/types.js';
import { tempDir } from './db.js';
import { until } from './wait.js';

export interface TestDaemon extends Daemon {
  logs: string[];
  /** The headers an API client of this daemon sends (its token). */
  readonly auth: Record<string, string>;
  /** fetch(`${url}${path}`) with the token. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** The ws:// URL of `path`, with the token as `?token=` (WebSocket clients cannot set headers). */
  wsUrl(path: string): string;
}

/** The token as clients send it, for a daemon started here or elsewhere (null: `--no-auth`). */
export function authHeaders(token: string | null): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

export async function startTestDaemon(overrides: Partial<MaestroConfig> = {}, options: DaemonOptions = {}): Promise<TestDaemon> {
  const home = overrides.home ?? tempDir('maestro-home-');
  const config: MaestroConfig = { ...resolveConfig({ home, port: 0 }, {}), logLevel: 'info', ...overrides };
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const daemon = await startDaemon(config, { logDestination: sink, env: process.env, ...options });
  const auth = authHeaders(daemon.token);
  const inject = daemon.app.inject.bind(daemon.app);
  // Every in-process request is a client that holds the token, as the CLI and the board do.
  (daemon.app as { inject: unknown }).inject = (opts: InjectOptions) => inject({ ...opts, headers: { ...auth, ...(opts.headers ?? {}) } });
  return Object.assign(daemon, {
    logs,
    auth,
    fetch: (path: string, init: RequestInit = {}) => fetch(`${daemon.url}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } }),
    wsUrl: (path: string) => `${daemon.url.replace(/^http/, 'ws')}${path}${daemon.token ? `${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(daemon.token)}` : ''}`,
  });
}

/**
 * A request to a test daemon over its real socket, as the CLI makes it. The
 * one place that adds what the daemon asks of its clients (headers, a token),
 * so suites need not know.
 */
export async function daemonRequest<T = unknown>(d: Pick<Daemon, 'url' | 'token'>, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: { ...authHeaders(d.token), 'x-maestro-client': 'test', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Waits for a task to reach `want`; a task that needs attention or was cancelled (unless that is `want`) fails at once, with its error. */
export function taskReaches(d: Daemon, taskId: string, want: TaskStatus, timeoutMs: number): Promise<Task> {
  return until(d.bus, async () => {
    const t = await d.store.tasks.get(taskId);
    if (t.status === want) return t;
    if (t.status === 'needs_attention' || t.status === 'cancelled') throw new Error(`task is ${t.status}: ${t.lastRunError}`);
    return null;
  }, `the task to be ${want}`, timeoutMs);
}

export const taskDone = (d: Daemon, taskId: string, timeoutMs: number): Promise<Task> => taskReaches(d, taskId, 'done', timeoutMs);
