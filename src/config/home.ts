/**
 * The home folder and its API token, without zod (the CLI's API client reads
 * the token and should not load the config schema to do it).
 *
 * `$MAESTRO_HOME/token` is the daemon's secret, created on its first start:
 * 32 random bytes (base64url), mode 0600 from the first byte (a fresh temporary
 * file opened with O_CREAT|O_EXCL and that mode, so no reader ever sees it
 * wider), fsynced, then renamed into place, so a client reads the old file or
 * the new one, never half of one. Only the daemon holding the home lock
 * writes it. A token file that another user could read, or that another user
 * owns, is not trusted: it may already have been read, so fixing its mode
 * would keep a leaked secret. The daemon replaces it with a fresh one and says
 * so; clients holding the old token then get a 401 naming the file. (The write
 * is the one atomic write, src/lib/atomicWrite.ts, with mode 0600.)
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../lib/atomicWrite.js';
import { isPidAlive } from '../lib/processes.js';

export const TOKEN_FILE = 'token';
/** What a token file must hold: our own tokens are 43 characters; MAESTRO_TOKEN may be any string of 8 or more. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,512}$/;

export function resolveHome(env: NodeJS.ProcessEnv): string {
  return resolve(env.MAESTRO_HOME || join(homedir(), '.maestro'));
}

export function tokenPath(home: string): string {
  return join(home, TOKEN_FILE);
}

export { isLoopback } from '../lib/loopback.js';

/** The home's token, or null when there is none (or it cannot be read). For clients: never creates one. */
export function readHomeToken(home: string): string | null {
  try {
    const text = readFileSync(tokenPath(home), 'utf8').trim();
    return TOKEN_SHAPE.test(text) ? text : null;
  } catch {
    return null;
  }
}

/** Why an existing token file cannot be trusted, or null when it can. */
function distrust(home: string): string | null {
  const path = tokenPath(home);
  const st = lstatSync(path);
  if (!st.isFile()) return `${path} is not a regular file`;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return `${path} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `${path} was readable by other users (mode ${(st.mode & 0o777).toString(8)})`;
  return readHomeToken(home) ? null : `${path} did not hold a token`;
}

/**
 * The daemon's token: the one in the home, else a new one. `warn` hears why
 * an untrusted file was replaced. Call with the home lock held.
 */
export function ensureHomeToken(home: string, warn: (message: string) => void): string {
  const path = tokenPath(home);
  let why: string | null = null;
  try {
    why = distrust(home);
    if (!why) return readHomeToken(home)!;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = randomBytes(32).toString('base64url');
  writeFileAtomic(path, `${token}\n`, { mode: 0o600 });
  if (why) warn(`${why}; replaced it with a new token (mode 0600). Clients read the new one from ${path}.`);
  return token;
}

/** Where a daemon on this home says it listens (written once it listens, removed when it stops). */
export const DAEMON_URL_FILE = 'daemon.url';

/**
 * Records the daemon's URL in its home, so a client given only MAESTRO_HOME finds a daemon started on another
 * port (it used to try :4300 and meet another home's daemon, whose token is not this one). Returns the removal.
 */
export function writeHomeDaemonUrl(home: string, url: string): () => void {
  const path = join(home, DAEMON_URL_FILE);
  writeFileAtomic(path, `${JSON.stringify({ url, pid: process.pid, host: hostname() })}\n`);
  return () => rmSync(path, { force: true });
}

/**
 * The URL of the daemon running on `home`, or null: none recorded, one recorded on another host (a home on a
 * shared disk), or one whose process is gone (a crash left the file).
 */
export function readHomeDaemonUrl(home: string): string | null {
  try {
    const { url, pid, host } = JSON.parse(readFileSync(join(home, DAEMON_URL_FILE), 'utf8')) as { url?: unknown; pid?: unknown; host?: unknown };
    if (typeof url !== 'string' || typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0 || host !== hostname()) return null;
    return isPidAlive(pid) ? url : null;
  } catch {
    return null;
  }
}
