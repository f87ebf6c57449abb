/**
 * How every CLI command reports: `--json` prints stable fields on stdout;
 * otherwise human text. Errors print the same message the API gives and set
 * the exit code: 0 ok, 1 error, 2 usage.
 */
import { CommanderError } from 'commander';
import { MaestroError, coerceError } from '../core/errors.js';
import { visible } from '../lib/visible.js';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Human output. What it shows comes from agents, repositories and transcripts (a task's title, a reviewer's finding,
 * a spec's body, a question), so its control characters are shown as `\u{…}` (visible): an escape sequence could
 * otherwise erase the lines above it, or write to the clipboard, on the person's terminal.
 */
export function printText(text: string): void {
  process.stdout.write(visible(text));
}

/**
 * Prints an error (as JSON when asked) and returns the exit code to use. A commander error thrown by an
 * action's own parsing (an InvalidArgumentError from a value read there) is a usage error, like the
 * ones commander reports itself.
 */
export function reportError(err: unknown, json: boolean): number {
  const e = err instanceof CommanderError ? new MaestroError('BAD_INPUT', err.message.replace(/^error: /, ''), { cause: err }) : coerceError(err);
  const code = e instanceof MaestroError ? e.code : 'INTERNAL';
  if (json) process.stdout.write(`${JSON.stringify({ error: { code, message: e.message } })}\n`);
  else process.stderr.write(`maestro: ${visible(e.message)}${code === 'INTERNAL' ? '' : ` [${code}]`}\n`);
  if (e instanceof MaestroError && e.code === 'BAD_INPUT') return EXIT_USAGE;
  return EXIT_ERROR;
}

/**
 * Wraps a command action: runs it, reports any error and sets the exit code.
 * The action receives commander's arguments unchanged.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as { optsWithGlobals?: () => { json?: boolean } } | undefined;
    const json = Boolean(cmd?.optsWithGlobals?.().json);
    try {
      await fn(...args);
    } catch (err) {
      process.exitCode = reportError(err, json);
    }
  };
}
