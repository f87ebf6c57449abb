/**
 * Whether the PostgreSQL server the daemon uses lets its role in over TCP with no password. The agent sandbox
 * shares the host's network (agents talk to their model) and hides only the Unix socket's folder, so a server
 * that trusts 127.0.0.1 (plain `initdb` does) or the machine's own address lets any process on the machine,
 * a sandboxed agent included, write the store: approve its own task, say. `maestro serve` refuses such a
 * database unless the person allowed it (`allowPasswordlessDatabase`); `maestro doctor` fails its check.
 *
 * The probe logs in as the URL says with the password taken out (the user info, `?password=`) and without the
 * client certificate (`sslcert`, `sslkey`: a certificate login needs a file the sandbox can hide); a URL through
 * a Unix socket is tried at 127.0.0.1 on the same port, where the server listens on TCP too. In the password's
 * place it gives a random one of its own, so that PGPASSWORD and ~/.pgpass are never read (node-postgres falls
 * back to them for a missing or empty one): a server that asks refuses it, only one that does not ask lets the
 * probe in. Nothing here logs or returns the person's password: the URLs it reports have none.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type LoginProbe =
  /** The server let the role in with no password at `url` (no password in it). */
  | { state: 'passwordless'; url: string }
  /** It did not: it asked for a password, refused the login, or (for a Unix socket's URL) listens on no TCP port. */
  | { state: 'refused'; detail: string }
  /** It could not be asked (unreachable, timed out): the daemon's own connection says why when it opens the store. */
  | { state: 'unknown'; detail: string };

/** 5 s: a server that answers nothing must not hold the daemon's start; a login on a busy machine takes milliseconds. */
const CONNECT_TIMEOUT_MS = 5000;
/** Refusals of the login itself (wrong or missing password, no pg_hba.conf line): the server did not let the role in. */
const LOGIN_REFUSED = ['28P01', '28000'];
const SECRET_PARAMS = ['password', 'sslpassword', 'sslcert', 'sslkey'];

/** Where a passwordless login is tried (`env`: for PGHOST and PGPORT, which node-postgres reads): the URL without its secrets, or 127.0.0.1 at its port for a Unix socket's. */
export function probeTarget(url: string, env: NodeJS.ProcessEnv): { url: string; socket: boolean } {
  const u = new URL(url);
  u.password = '';
  for (const key of SECRET_PARAMS) u.searchParams.delete(key);
  const host = u.searchParams.get('host') ?? (decodeURIComponent(u.hostname) || env.PGHOST || '');
  if (!host.startsWith('/')) return { url: u.toString(), socket: false };
  u.searchParams.delete('host');
  u.hostname = '127.0.0.1';
  if (!u.port && env.PGPORT) u.port = env.PGPORT;
  return { url: u.toString(), socket: true };
}

/** `target` with a random password no server holds for the role: see the top of the file. */
function withThrowawayPassword(target: string): string {
  const u = new URL(target);
  u.password = randomBytes(18).toString('base64url');
  return u.toString();
}

export async function probePasswordlessLogin(url: string, options: { env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<LoginProbe> {
  let target: ReturnType<typeof probeTarget>;
  try {
    target = probeTarget(url, options.env);
  } catch {
    return { state: 'unknown', detail: 'the database URL is not one a login can be tried with' }; // no URL in the message: it may hold the password
  }
  const client = new pg.Client({ connectionString: withThrowawayPassword(target.url), connectionTimeoutMillis: options.timeoutMs ?? CONNECT_TIMEOUT_MS });
  client.on('error', () => {}); // a connection lost after the answer is no concern of the probe
  try {
    await client.connect();
    return { state: 'passwordless', url: target.url };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const message = e.message ?? String(err);
    if (e.code && LOGIN_REFUSED.includes(e.code)) return { state: 'refused', detail: `${target.url} does not let the role in without a password (${message})` };
    if (target.socket && e.code === 'ECONNREFUSED') return { state: 'refused', detail: `nothing listens on TCP at ${target.url}` };
    return { state: 'unknown', detail: `${target.url}: ${message}` };
  } finally {
    await client.end().catch(() => {});
  }
}
