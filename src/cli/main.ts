/** The `maestro` command line: one program over every subsystem. */
import { Command, CommanderError } from 'commander';
import { COMMAND_MODULES } from './commands/index.js';
import { MaestroError } from '../core/errors.js';
import { EXIT_USAGE, reportError } from './output.js';

/**
 * With `--json` anywhere on the line, a usage error is printed as the same
 * `{ error: { code, message } }` object every other error uses (on stdout),
 * not as commander's text and help; the exit code stays 2.
 */
export function buildProgram(json = false): Command {
  const program = new Command('maestro')
    .description('Run coding agents on Git repositories like a tech lead runs a team.')
    .version('0.1.0')
    .exitOverride();
  if (json) program.configureOutput({ outputError: () => undefined });
  else program.showHelpAfterError();
  for (const register of COMMAND_MODULES) register(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const json = argv.slice(2).includes('--json');
  const program = buildProgram(json);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; any other commander error is a usage error.
      if (err.exitCode === 0) return;
      if (json) reportError(new MaestroError('BAD_INPUT', err.message.replace(/^error: /, '')), true);
      process.exitCode = EXIT_USAGE;
      return;
    }
    throw err;
  }
}

await main(process.argv);
