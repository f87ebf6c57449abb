/**
 * How every CLI command reports: `--json` prints stable fields on stdout;
 * otherwise human text. Errors print the same message the API gives and set
 * the exit code: 0 ok, 1 error, 2 usage, 141 when the reader of the output
 * went away (`| head`).
 */
import { CommanderError, type Command, type Option } from 'commander';
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
    const cmd = args[args.length - 1] as (Partial<Pick<Command, 'options'>> & { optsWithGlobals?: () => { json?: boolean } }) | undefined;
    const json = Boolean(cmd?.optsWithGlobals?.().json);
    try {
      await fn(...args);
    } catch (err) {
      process.exitCode = reportError(inFlagTerms(err, cmd?.options ?? []), json);
    }
  };
}

/** A field's place after its option: `.0` is the option's first value, deeper keys stay as the API names them. */
function within(rest: readonly (string | number)[]): string {
  if (!rest.length) return '';
  const [first, ...more] = rest;
  const item = typeof first === 'number' ? `value ${first + 1}` : String(first);
  return ` (${[item, ...more].join('.')})`;
}

/**
 * The API words a refused body or query by its fields ("Invalid body: ownedFiles.0: …"), which a person at the
 * CLI never typed: where a field is the value of one of the command's options (the option's attribute is the
 * field's name), the message names the option instead ("Invalid --owned-files (value 1): …"). A field no
 * option gives is named as before; any other error is left as it is.
 */
export function inFlagTerms(err: unknown, options: readonly Option[]): unknown {
  if (!(err instanceof MaestroError) || err.code !== 'BAD_INPUT' || !/^Invalid (body|query): /.test(err.message)) return err;
  const issues = err.details?.issues as Array<{ path?: unknown; message?: unknown }> | undefined;
  if (!Array.isArray(issues) || !issues.length) return err;
  let named = false;
  const parts = issues.map((i) => {
    const path = Array.isArray(i.path) ? (i.path as (string | number)[]) : [];
    const option = path.length ? options.find((o) => o.long && o.attributeName() === path[0]) : undefined;
    named ||= Boolean(option);
    const where = option ? `${option.long}${within(path.slice(1))}` : path.join('.');
    return where ? `${where}: ${String(i.message)}` : String(i.message);
  });
  if (!named) return err;
  return new MaestroError('BAD_INPUT', `Invalid ${parts.join('; ')}`, { cause: err, details: err.details });
}
