/**
 * Environment variables that several parts of Maestro read, each read here
 * once, with one rule (the daemon's own settings are resolved in config.ts;
 * agentEnv.ts decides what a child process may see, which is another thing).
 * No zod here: the CLI's fast paths load this. A test (env.test.ts) fails when
 * one of these names is read anywhere else under src/.
 *
 * Every function here takes `env`: the process environment itself is read where
 * a process starts (the CLI's main.ts, a worker's entry) and passed down; env.test.ts
 * lists the few files that read the process environment, and why.
 *
 * - MAESTRO_PORT: the daemon's port, for the daemon and, without MAESTRO_URL, its clients.
 * - MAESTRO_URL: where a client finds the daemon (else http://127.0.0.1:$MAESTRO_PORT);
 *   the one daemon URL, `maestro search` included.
 * - MAESTRO_SEARCH_DAEMON: whether `maestro search` asks that daemon: `auto` (the
 *   default: when this home's daemon runs), `on` (always; its errors are the
 *   answer) or `off` (never; also `maestro search --no-daemon`).
 * - MAESTRO_TOKEN: the token a client sends; else the home's token file, for a
 *   daemon on this machine's loopback only (the local secret never travels).
 * - MAESTRO_READ_TIMEOUT: seconds a client waits for the daemon to begin answering
 *   a read (default 60).
 * - FLOW_WIKI_DIR, else FLOW_ROOT_DIR/wiki, else FLOW_PROJECT_DIR/wiki: the
 *   observer's wiki (the knowledge search reads the same folder).
 * - CLAUDE_CONFIG_DIR, else $HOME/.claude: where a Claude Code login lives.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { DEFAULTS } from './defaults.js';
import { isLoopback, readHomeDaemonUrl, readHomeToken, resolveHome, tokenPath } from './home.js';

export type Env = Record<string, string | undefined>;

/** The daemon URL the environment names (MAESTRO_URL), or undefined. */
export function daemonUrlFromEnv(env: Env): string | undefined {
  return env.MAESTRO_URL || undefined;
}

/** MAESTRO_PORT, the daemon's port (unset or empty: undefined); read alike by the daemon and its clients. */
export function envPort(env: Env): number | undefined {
  if (env.MAESTRO_PORT === undefined || env.MAESTRO_PORT === '') return undefined;
  const port = Number(env.MAESTRO_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MaestroError('CONFIG_INVALID', `MAESTRO_PORT must be a port number (0–65535), got "${env.MAESTRO_PORT}".`);
  }
  return port;
}

/**
 * Where a client finds the daemon when no flag says: MAESTRO_URL, else this host's MAESTRO_PORT (a port: "4300/x"
 * named a path), else the URL the daemon running on MAESTRO_HOME recorded there (it may listen on another port), else :4300.
 */
export function defaultDaemonUrl(env: Env): string {
  const port = daemonUrlFromEnv(env) ? undefined : envPort(env);
  return daemonUrlFromEnv(env) ?? (port !== undefined ? `http://127.0.0.1:${port}` : (readHomeDaemonUrl(resolveHome(env)) ?? `http://127.0.0.1:${DEFAULTS.port}`));
}

export type SearchDaemon = 'auto' | 'on' | 'off';

/** MAESTRO_SEARCH_DAEMON for `maestro search` (unset or empty: auto); a bad value, or the old MAESTRO_DAEMON_URL, is refused by name. */
export function searchDaemonSetting(env: Env): SearchDaemon {
  if (env.MAESTRO_DAEMON_URL) {
    throw new MaestroError('BAD_INPUT', `MAESTRO_DAEMON_URL is gone: MAESTRO_URL names the daemon (set it to ${JSON.stringify(env.MAESTRO_DAEMON_URL)} if that is the one), and MAESTRO_SEARCH_DAEMON=on|off|auto says whether \`maestro search\` asks it.`);
  }
  const value = (env.MAESTRO_SEARCH_DAEMON ?? '').trim().toLowerCase();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'on' || value === 'off') return value;
  throw new MaestroError('BAD_INPUT', `MAESTRO_SEARCH_DAEMON must be auto, on or off, got ${JSON.stringify(env.MAESTRO_SEARCH_DAEMON)}.`);
}

/** How long a client waits for the daemon to begin answering a read: MAESTRO_READ_TIMEOUT seconds (60 when unset or empty). */
export function readTimeoutMs(env: Env): number {
  const value = (env.MAESTRO_READ_TIMEOUT ?? '').trim();
  if (value === '') return DEFAULT_READ_TIMEOUT_S * 1000;
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(seconds > 0) || seconds > MAX_READ_TIMEOUT_S) {
    throw new MaestroError('BAD_INPUT', `MAESTRO_READ_TIMEOUT must be a number of seconds above 0 and at most ${MAX_READ_TIMEOUT_S}, got ${JSON.stringify(env.MAESTRO_READ_TIMEOUT)}.`);
  }
  return Math.round(seconds * 1000);
}
const DEFAULT_READ_TIMEOUT_S = 60;
/** An hour: longer is no longer a wait for an answer (and setTimeout's limit is 24 days). */
const MAX_READ_TIMEOUT_S = 3600;

/** The token a client sends to the daemon at `url`: MAESTRO_TOKEN, else the home's token for a loopback daemon, else none. */
export function clientToken(url: URL, env: Env): string | null {
  return clientTokenSource(url, env).token;
}

/**
 * The token a client sends and where it comes from, in words for a refusal (401): a CLI run with another
 * MAESTRO_HOME than its daemon's finds no token file, or another daemon's, and the daemon's own message can only
 * say where a token may be, not which file this client read.
 */
export function clientTokenSource(url: URL, env: Env): { token: string | null; from: string } {
  if (env.MAESTRO_TOKEN) return { token: env.MAESTRO_TOKEN, from: 'the CLI sent MAESTRO_TOKEN' };
  if (!isLoopback(url.hostname.replace(/^\[|\]$/g, ''))) return { token: null, from: `the CLI sends $MAESTRO_HOME/token only to a daemon on loopback: set MAESTRO_TOKEN for ${url.host}` };
  const home = resolveHome(env);
  const file = tokenPath(home);
  const token = readHomeToken(home);
  return token
    ? { token, from: `the CLI sent the token of ${file}: if the daemon at ${url.origin} runs with another MAESTRO_HOME, run the CLI with that one` }
    : { token: null, from: `the CLI found no token at ${file}: run it with the MAESTRO_HOME of the daemon at ${url.origin}, or set MAESTRO_TOKEN` };
}

/** The wiki folder the FLOW_* variables name (relative ones from `base`), or undefined when none is set. */
export function wikiDirFromEnv(env: Env, base: string): string | undefined {
  if (env.FLOW_WIKI_DIR) return resolve(base, env.FLOW_WIKI_DIR);
  if (env.FLOW_ROOT_DIR) return resolve(base, env.FLOW_ROOT_DIR, 'wiki');
  if (env.FLOW_PROJECT_DIR) return resolve(base, env.FLOW_PROJECT_DIR, 'wiki');
  return undefined;
}

/** Which FLOW_* variable named the wiki folder (for messages), or undefined. */
export function wikiDirVariable(env: Env): 'FLOW_WIKI_DIR' | 'FLOW_ROOT_DIR' | 'FLOW_PROJECT_DIR' | undefined {
  return env.FLOW_WIKI_DIR ? 'FLOW_WIKI_DIR' : env.FLOW_ROOT_DIR ? 'FLOW_ROOT_DIR' : env.FLOW_PROJECT_DIR ? 'FLOW_PROJECT_DIR' : undefined;
}

/** Where Claude Code keeps its login and its session transcripts (`projects/`). */
export function claudeConfigDir(env: Env): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
}
