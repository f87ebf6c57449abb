/**
 * Where a client finds the daemon: one variable, `MAESTRO_URL`.
 *
 * `MAESTRO_DAEMON_URL` was the knowledge warm path's own name for the same
 * thing. It stays accepted, with a one-line warning, because the knowledge
 * README and architecture notes of earlier versions told people to export it,
 * and a setup that still does would otherwise lose the warm path without a
 * word (searches quietly run in process instead). MAESTRO_URL wins when both
 * are set. No zod here: the CLI's fast paths load this.
 */
export const DEPRECATED_DAEMON_URL = 'MAESTRO_DAEMON_URL';

/** The daemon URL the environment names, or undefined. `warn` hears the deprecation line (stderr by default). */
export function daemonUrlFromEnv(env: NodeJS.ProcessEnv = process.env, warn: (line: string) => void = warnOnce): string | undefined {
  if (env.MAESTRO_URL) return env.MAESTRO_URL;
  const old = env[DEPRECATED_DAEMON_URL];
  if (!old) return undefined;
  warn(`maestro: ${DEPRECATED_DAEMON_URL} is deprecated; set MAESTRO_URL=${old} instead.`);
  return old;
}

let warned = false;
function warnOnce(line: string): void {
  if (warned) return;
  warned = true;
  process.stderr.write(`${line}\n`);
}
