/** The `maestro` command line: one program over every subsystem. */
import { CommanderError } from 'commander';
import { fileURLToPath } from 'node:url';
import { buildProgram } from './program.js';
import type { Env } from '../config/env.js';
import { MaestroError } from '../core/errors.js';
import { EXIT_USAGE, endQuietlyWhenOutputCloses, reportError } from './output.js';
import { pathOutsideNpmStart } from './npmPath.js';

/** `env`: the process environment, read once by the entry below and handed to every command. */
export async function main(argv: string[], env: Env): Promise<void> {
  endQuietlyWhenOutputCloses();
  const args = argv.slice(2);
  const json = args.includes('--json');
  const program = await buildProgram(args, { env }, json);
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

// Under `npm start`, the agent CLIs and tools found are the person's, not this installation's own (npmPath.ts).
const path = pathOutsideNpmStart(process.env, fileURLToPath(new URL('../..', import.meta.url)));
if (path !== undefined) process.env.PATH = path;
await main(process.argv, process.env);
