/** The note at the end of `maestro --help`: which commands need a running daemon. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export const NO_DAEMON_NOTE = `
Without a daemon: \`init\`, \`doctor\` and the knowledge commands work on their own.
Every other command talks to a running daemon (\`maestro serve\`) over its API:
--url, MAESTRO_URL, else http://127.0.0.1:$MAESTRO_PORT (default 4300); the token is
MAESTRO_TOKEN, else $MAESTRO_HOME/token (sent to a daemon on loopback only). Every command takes --json. Exit codes: 0 ok, 1 error, 2 usage, 141 when the reader of the output stopped early (| head).`;

export function register(program: Command, ctx: CliContext): void {
  program.addHelpText('after', NO_DAEMON_NOTE);
}
