/**
 * The CLI's warm path: `maestro search` asks a running daemon, whose index is
 * open and warm, instead of opening the index and checking every file itself.
 *
 * Which daemon (`daemonTarget`): the one the CLI's other commands ask
 * (MAESTRO_URL, else http://127.0.0.1:$MAESTRO_PORT, else the daemon of $MAESTRO_HOME, else :4300), and whether:
 * MAESTRO_SEARCH_DAEMON `off` (or `--no-daemon`) never; `on` always, its
 * errors being the answer; `auto` (the default) only when
 * `$MAESTRO_HOME/daemon.lock` names a live process on this host, so a CLI
 * with no daemon running pays one failed file read, not a connection. The
 * token: MAESTRO_TOKEN, else the home's token file for a daemon on loopback
 * (the same rule as ApiClient), never to another user's program on a loopback port.
 *
 * Only when it is faster, and gives the same answer: on 10,000 entries a cold
 * search through the daemon costs about 90 ms of CPU against 240 ms in
 * process (bench:search), so the daemon is asked whenever one answers; it
 * answers `fresh` (it re-checks the files first, as a search in process
 * does, instead of its one-second throttle). A daemon that does not answer
 * within DAEMON_TIMEOUT_MS, or (found by itself, not named) answers anything
 * but a result — a refused folder, a token it does not take, a server error —
 * or answers with vectors this CLI would not use, leaves the search to this
 * process; so does a CLI whose own settings change the answer (ANSWER_SETTINGS). An error a named daemon reports is the answer, not a reason to
 * retry locally.
 *
 * The request goes through `node:http`, not the global `fetch`: a cold
 * process pays 80–250 ms to bootstrap fetch's implementation (undici) before
 * the first byte, several times what the daemon takes to answer, which made
 * the warm path slower than searching in process (issue 16 item 3).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { clientToken, defaultDaemonUrl, searchDaemonSetting } from '../../config/env.js';
import { resolveHome } from '../../config/home.js';
import { MaestroError, type ErrorCode } from '../../core/errors.js';
import { refuseForeignListener } from '../../lib/portOwner.js';
import { isPidAlive } from '../../lib/processes.js';
import { toQueryString, type SearchRequest } from './params.js';

export const DAEMON_TIMEOUT_MS = 2000;

export interface DaemonTarget {
  url: string;
  /** Asked because MAESTRO_SEARCH_DAEMON=on (its errors are the answer), or found through the home's lock. */
  named: boolean;
}

/** The home's daemon lock (daemon/homeLock.ts), when it names a live process on this host. */
function homeDaemonRuns(home: string): boolean {
  try {
    const lock = JSON.parse(readFileSync(join(home, 'daemon.lock'), 'utf8')) as { pid?: unknown; host?: unknown };
    return typeof lock.pid === 'number' && lock.host === hostname() && isPidAlive(lock.pid);
  } catch {
    return false; // no lock (no daemon), or one being replaced: search in process
  }
}

/** Which daemon `maestro search` asks, or null: search in process. */
export function daemonTarget(env: NodeJS.ProcessEnv): DaemonTarget | null {
  const setting = searchDaemonSetting(env);
  if (setting === 'off') return null;
  if (setting === 'on') return { url: defaultDaemonUrl(env), named: true };
  if (!homeDaemonRuns(resolveHome(env))) return null;
  return { url: defaultDaemonUrl(env), named: false };
}

interface Answer {
  status: number;
  body: string;
}

/** GET with a timeout; null when nothing answers (refused, reset, timed out). */
async function get(url: URL, headers: Record<string, string>): Promise<Answer | null> {
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', headers, timeout: DAEMON_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

/**
 * Settings that change a search's answer and that a daemon found by itself may not share (it runs with its
 * own environment): vectors (an embedder configured here) and the user whose personal specs are read.
 */
const ANSWER_SETTINGS = ['MAESTRO_EMBEDDINGS_ONNX', 'MAESTRO_EMBEDDINGS_URL', 'MAESTRO_UID'] as const;

/** The daemon's answer to a search, or undefined: search in process. */
export async function searchViaDaemon(req: SearchRequest, workflowDir: string, includeGlobal: boolean, env: NodeJS.ProcessEnv): Promise<unknown | undefined> {
  const target = daemonTarget(env);
  if (!target) return undefined;
  if (!target.named && ANSWER_SETTINGS.some((name) => env[name])) return undefined;
  let url: URL;
  try {
    url = new URL(`${target.url.replace(/\/$/, '')}/api/knowledge/search?${toQueryString(req, workflowDir, includeGlobal)}&fresh=true`);
  } catch {
    return undefined; // not a URL: nothing to ask
  }
  const token = clientToken(url, env);
  if (token) {
    try {
      refuseForeignListener(url);
    } catch (err) {
      if (!target.named) return undefined; // another user's program on the port: search in process, send it nothing
      throw err;
    }
  }
  const res = await get(url, token ? { authorization: `Bearer ${token}` } : {});
  if (!res) return undefined; // no daemon answering: search in process
  if (res.status === 404) return undefined; // an older daemon without the route
  let body: { error?: { code: ErrorCode; message: string }; retrieval?: string };
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    if (!target.named) return undefined;
    throw new MaestroError('INTERNAL', `the daemon at ${target.url} answered ${res.status} with something other than JSON`);
  }
  // The daemon reads only registered projects; this folder is not one, so it is searched in process.
  if (res.status === 403 && body.error?.code === 'PATH_OUTSIDE_PROJECTS') return undefined;
  if (res.status < 200 || res.status >= 300) {
    if (!target.named) return undefined;
    throw new MaestroError(body.error?.code ?? 'INTERNAL', body.error?.message ?? `daemon answered ${res.status}`);
  }
  // Vectors configured in the daemon but not here: this process would answer without them.
  if (!target.named && body.retrieval === 'hybrid') return undefined;
  return body;
}
