/** The `maestro` command line: one program over every subsystem. */
import { Command, CommanderError } from 'commander';
import { COMMAND_MODULES } from './commands/index.js';
import { EXIT_USAGE } from './output.js';

export function buildProgram(): Command {
  const program = new Command('maestro')
    .description('Run coding agents on Git repositories like a tech lead runs a team.')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  for (const register of COMMAND_MODULES) register(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; any other commander error is a usage error.
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    throw err;
  }
}

await main(process.argv);
