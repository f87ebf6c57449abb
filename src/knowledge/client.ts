/**
 * The CLI's warm path: when MAESTRO_URL names a running daemon, search
 * is answered there (warm index). If the daemon cannot be reached the CLI
 * searches in process; an error the daemon reports is the answer, not a
 * reason to retry locally. The token: MAESTRO_TOKEN, else the home's token
 * file for a daemon on loopback (the same rule as the CLI's ApiClient).
 *
 * The request goes through `node:http`, not the global `fetch`: a cold
 * process pays 80–250 ms to bootstrap fetch's implementation (undici) before
 * the first byte, several times what the daemon takes to answer, which made
 * the warm path slower than searching in process (issue 16 item 3).
 */
import { clientToken, daemonUrlFromEnv } from '../config/env.js';
import { MaestroError, type ErrorCode } from '../core/errors.js';
import { toQueryString, type SearchRequest } from './params.js';

export const DAEMON_TIMEOUT_MS = 2000;

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

export async function searchViaDaemon(req: SearchRequest, workflowDir: string, includeGlobal: boolean, env: NodeJS.ProcessEnv = process.env): Promise<unknown | undefined> {
  const base = daemonUrlFromEnv(env);
  if (!base) return undefined;
  let url: URL;
  try {
    url = new URL(`${base.replace(/\/$/, '')}/api/knowledge/search?${toQueryString(req, workflowDir, includeGlobal)}`);
  } catch {
    return undefined; // not a URL: nothing to ask
  }
  const token = clientToken(url, env);
  const res = await get(url, token ? { authorization: `Bearer ${token}` } : {});
  if (!res) return undefined; // no daemon answering: search in process
  if (res.status === 404) return undefined; // an older daemon without the route
  let body: { error?: { code: ErrorCode; message: string } };
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    throw new MaestroError('INTERNAL', `the daemon at ${base} answered ${res.status} with something other than JSON`);
  }
  // The daemon reads only registered projects; this folder is not one, so it is searched in process.
  if (res.status === 403 && body.error?.code === 'PATH_OUTSIDE_PROJECTS') return undefined;
  if (res.status < 200 || res.status >= 300) throw new MaestroError(body.error?.code ?? 'INTERNAL', body.error?.message ?? `daemon answered ${res.status}`);
  return body;
}
