/**
 * The CLI's warm path: when MAESTRO_DAEMON_URL names a running daemon, search
 * is answered there (warm index). If the daemon cannot be reached the CLI
 * searches in process; an error the daemon reports is the answer, not a
 * reason to retry locally. The token: MAESTRO_TOKEN, else the home's token
 * file for a daemon on loopback (the same rule as the CLI's ApiClient).
 */
import { isLoopback, readHomeToken, resolveHome } from '../config/home.js';
import { MaestroError, type ErrorCode } from '../core/errors.js';
import { toQueryString, type SearchRequest } from './params.js';

export const DAEMON_TIMEOUT_MS = 2000;

export async function searchViaDaemon(req: SearchRequest, workflowDir: string, includeGlobal: boolean, env: NodeJS.ProcessEnv = process.env): Promise<unknown | undefined> {
  const base = env.MAESTRO_DAEMON_URL;
  if (!base) return undefined;
  let res: Response;
  try {
    const token = env.MAESTRO_TOKEN || (isLoopback(new URL(base).hostname) ? readHomeToken(resolveHome(env)) : null);
    res = await fetch(`${base.replace(/\/$/, '')}/api/knowledge/search?${toQueryString(req, workflowDir, includeGlobal)}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(DAEMON_TIMEOUT_MS),
    });
  } catch {
    return undefined; // no daemon answering: search in process
  }
  if (res.status === 404) return undefined; // an older daemon without the route
  const body = (await res.json()) as { error?: { code: ErrorCode; message: string } };
  // The daemon reads only registered projects; this folder is not one, so it is searched in process.
  if (res.status === 403 && body.error?.code === 'PATH_OUTSIDE_PROJECTS') return undefined;
  if (!res.ok) throw new MaestroError(body.error?.code ?? 'INTERNAL', body.error?.message ?? `daemon answered ${res.status}`);
  return body;
}
