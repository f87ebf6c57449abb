/**
 * What the CLI checks of every value a person types, before any command acts on it: an empty value,
 * or another option taken as an option's value, is refused for every option and argument at once
 * (guardValues); whole numbers, folders and text files are read by the parsers below, so each kind
 * of value is refused in one way, naming the option and the value. A refusal is a usage error
 * (exit 2) and nothing has been read or written yet.
 */
import { statSync } from 'node:fs';
import { InvalidArgumentError, type Argument, type Command, type Option } from 'commander';
import { MaestroError } from '../core/errors.js';
import { readRegularBytes } from '../lib/regularFile.js';

type Parse = (value: string, previous: unknown) => unknown;

/**
 * Wraps the parser of every option that takes a value and of every argument, in `cmd` and all its
 * subcommands: an empty (or blank) value is refused, since commands would read it as "not given" (an
 * empty path is the current folder, an empty --url the default daemon, an empty --project every
 * project). An option whose value is another of the command's own options (`--project --json`) is
 * refused too: commander takes the next word as the value, whatever it is; `--project=--json` still
 * passes it on purpose. `args`: the command line, to tell the two apart.
 */
export function guardValues(cmd: Command, args: readonly string[]): void {
  const flags = cmd.options.flatMap((o) => [o.long, o.short]).filter(Boolean);
  for (const option of cmd.options as Option[]) {
    if (!option.required && !option.optional) continue;
    option.parseArg = guarded(option.parseArg as Parse | undefined, (value) => {
      if (!value.trim()) return 'It is empty: give a value, or leave the option out.';
      if (flags.includes(value) && !args.includes(`${option.long}=${value}`)) return `${value} is an option, not a value: ${option.flags} needs its value right after it.`;
      return null;
    }) as Option['parseArg'];
  }
  for (const argument of cmd.registeredArguments as Argument[]) {
    // With a parser, commander folds a variadic argument's words through it: without one of its own, collect them.
    const inner = (argument.parseArg as Parse | undefined) ?? (argument.variadic ? collect : undefined);
    argument.parseArg = guarded(inner, (value) => (value.trim() ? null : 'It is empty: give a value.')) as Argument['parseArg'];
  }
  for (const sub of cmd.commands) guardValues(sub, args);
}

const collect: Parse = (value, previous) => [...((previous as string[] | undefined) ?? []), value];

function guarded(inner: Parse | undefined, refuse: (value: string) => string | null): Parse {
  return (value, previous) => {
    const why = refuse(value);
    if (why) throw new InvalidArgumentError(why);
    return inner ? inner(value, previous) : value;
  };
}

/**
 * A whole number in decimal digits within [min, max]: not `1e3`, `0x10`, `1.0`, ` 5` or `` (which
 * `Number()` reads as 1000, 16, 1, 5 and 0). `rule` says the range as the message puts it.
 */
export function integerOption(rule: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
    if (!(n >= min && n <= max)) throw new InvalidArgumentError(`${rule}, got "${value}".`);
    return n;
  };
}

/** An option naming a folder that must exist already (commands that write would otherwise create a mistyped one). */
export function existingDir(flag: string): (value: string) => string {
  return (value) => {
    const stat = statSync(value, { throwIfNoEntry: false });
    if (!stat) throw new InvalidArgumentError(`${flag} ${value} does not exist.`);
    if (!stat.isDirectory()) throw new InvalidArgumentError(`${flag} ${value} is a file, not a folder.`);
    return value;
  };
}

/**
 * The text of a file a person names (`--content-file`): a regular file (a FIFO would block the command
 * until something writes to it, a folder cannot be read), in UTF-8 (anything else would be stored with
 * its bytes replaced by U+FFFD).
 */
export function readTextFile(path: string, flag: string): string {
  let bytes: Buffer;
  try {
    bytes = readRegularBytes(path);
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new MaestroError('BAD_INPUT', missing ? `${flag} ${path} does not exist.` : `${flag}: ${(err as Error).message}; give a file, or the text itself.`);
  }
  return decodeUtf8(bytes, `${flag} ${path}`);
}

/** Bytes as UTF-8, refusing any that are not. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MaestroError('BAD_INPUT', `${what} is not UTF-8 text; convert it (e.g. iconv -t UTF-8) and try again.`);
  }
}
