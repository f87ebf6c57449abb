/** The `maestro` program: commander with the command modules a command line needs. */
import { Command } from 'commander';
import { modulesFor } from './commands/index.js';
import type { CliContext } from './context.js';
import { guardValues } from './input.js';
import { MAESTRO_VERSION } from '../core/daemonSettings.js';

/**
 * With `--json` anywhere on the line, a usage error is printed as the same
 * `{ error: { code, message } }` object every other error uses (on stdout),
 * not as commander's text and help; the exit code stays 2. Only the command
 * modules `args` needs are loaded (commands/index.ts).
 *
 * The program's own options (--version, --help) count only before the command: otherwise commander
 * takes a command's option of the same name for the program's (`task diff <id> --version 2` printed
 * Maestro's version and exited 0). Every value is checked by guardValues (input.ts).
 */
export async function buildProgram(args: readonly string[], ctx: CliContext, json = false): Promise<Command> {
  const program = new Command('maestro')
    .description('Run coding agents on Git repositories like a tech lead runs a team.')
    .version(MAESTRO_VERSION)
    .enablePositionalOptions()
    .exitOverride();
  if (json) program.configureOutput({ outputError: () => undefined });
  // A line saying where the usage is, not the whole help: the top-level help runs to 50 lines and pushed a typo's
  // "Did you mean project?" off the screen (helper-123's trial).
  else program.showHelpAfterError('(run it with --help for its usage)');
  const modules = await Promise.all(modulesFor(args).map((m) => m.load()));
  for (const m of modules) m.register(program, ctx);
  guardValues(program, args);
  return program;
}
