/** A real daemon for tests: temporary MAESTRO_HOME, port 0, logs discarded (or kept in memory). */
import { Writable } from 'node:stream';
import { resolveConfig, type MaestroConfig } from '../../src/config/config.js';
import { startDaemon, type Daemon, type DaemonOptions } from '../../src/daemon/daemon.js';
import { tempDir } from './db.js';

export interface TestDaemon extends Daemon {
  logs: string[];
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
  const daemon = await startDaemon(config, { logDestination: sink, ...options });
  return Object.assign(daemon, { logs });
}

/**
 * A request to a test daemon over its real socket, as the CLI makes it. The
 * one place that adds what the daemon asks of its clients (headers, a token),
 * so suites need not know.
 */
export async function daemonRequest<T = unknown>(d: Pick<Daemon, 'url'>, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}
