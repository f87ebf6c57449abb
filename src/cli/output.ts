/**
 * How every CLI command reports: `--json` prints stable fields on stdout;
 * otherwise human text. Errors print the same message the API gives and set
 * the exit code: 0 ok, 1 error, 2 usage, 141 when the reader of the output
 * went away (`| head`).
 */
import { CommanderError } from 'commander';
import { MaestroError, coerceError } from '../core/errors.js';
import { visible } from '../lib/visible.js';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;
/**
 * 128 + SIGPIPE (13): what a shell reports for a program that wrote into a pipe whose reader had gone
 * (`yes | head -1`; `set -o pipefail` sees it). Node ignores SIGPIPE, so the CLI ends itself with that status.
 */
export const EXIT_OUTPUT_CLOSED = 141;

/**
 * `maestro task logs <id> | head -40`: `head` closes the pipe once it has its lines, and the next write
 * fails with EPIPE. The reader has what it wanted, so the command ends there, quietly, with
 * EXIT_OUTPUT_CLOSED. Without this listener the failed write was an unhandled 'error' event (a stack
 * trace and exit 1), or nothing, depending on whether the command had written its last line before
 * `head` closed the pipe. On stderr too: `maestro … 2>&1 | head` closes both. Any other write error
 * is thrown as before. Called once, by the entry (main.ts), before any command writes.
 */
export function endQuietlyWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(EXIT_OUTPUT_CLOSED);
      throw err;
    });
  }
}

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
