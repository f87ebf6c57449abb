/**
 * Environment variables that several parts of Maestro read, each read here
 * once, with one rule (the daemon's own settings are resolved in config.ts;
 * agentEnv.ts decides what a child process may see, which is another thing).
 * No zod here: the CLI's fast paths load this. A test (env.test.ts) fails when
 * one of these names is read anywhere else under src/.
 *
 * - MAESTRO_URL: where a client finds the daemon. `MAESTRO_DAEMON_URL` was the
 *   knowledge warm path's own name for the same thing; it stays accepted, with
 *   a one-line warning, because the knowledge README and architecture notes of
 *   earlier versions told people to export it, and a setup that still does
 *   would otherwise lose the warm path without a word (searches quietly run in
 *   process). MAESTRO_URL wins when both are set.
 * - MAESTRO_TOKEN: the token a client sends; else the home's token file, for a
 *   daemon on this machine's loopback only (the local secret never travels).
 * - FLOW_WIKI_DIR, else FLOW_ROOT_DIR/wiki, else FLOW_PROJECT_DIR/wiki: the
 *   observer's wiki (the knowledge search reads the same folder).
 * - CLAUDE_CONFIG_DIR, else $HOME/.claude: where a Claude Code login lives.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isLoopback, readHomeToken, resolveHome } from './home.js';

export type Env = Record<string, string | undefined>;

export const DEPRECATED_DAEMON_URL = 'MAESTRO_DAEMON_URL';

/** The daemon URL the environment names, or undefined. `warn` hears the deprecation line (stderr, once, by default). */
export function daemonUrlFromEnv(env: Env = process.env, warn: (line: string) => void = warnOnce): string | undefined {
  if (env.MAESTRO_URL) return env.MAESTRO_URL;
  const old = env[DEPRECATED_DAEMON_URL];
  if (!old) return undefined;
  warn(`maestro: ${DEPRECATED_DAEMON_URL} is deprecated; set MAESTRO_URL=${old} instead.`);
  return old;
}

/** Which variable named the daemon URL (for messages), or undefined. */
export function daemonUrlVariable(env: Env = process.env): 'MAESTRO_URL' | typeof DEPRECATED_DAEMON_URL | undefined {
  return env.MAESTRO_URL ? 'MAESTRO_URL' : env[DEPRECATED_DAEMON_URL] ? DEPRECATED_DAEMON_URL : undefined;
}

let warned = false;
function warnOnce(line: string): void {
  if (warned) return;
  warned = true;
  process.stderr.write(`${line}\n`);
}

/** The token a client sends to the daemon at `url`: MAESTRO_TOKEN, else the home's token for a loopback daemon, else none. */
export function clientToken(url: URL, env: Env = process.env): string | null {
  return env.MAESTRO_TOKEN || (isLoopback(url.hostname.replace(/^\[|\]$/g, '')) ? readHomeToken(resolveHome(env)) : null);
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
export function claudeConfigDir(env: Env = process.env): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
}
