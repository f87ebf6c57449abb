/**
 * The owned files `task create` and `task edit` take. `--owned-files a,b` is a comma-separated list (what scripts
 * give); a path in git may hold a comma, which the list splits into two wrong paths, so `--owned-file <path>` gives
 * one path, taken whole (commas and spaces kept), and is repeated for each. Both may be given, and each repeated:
 * the list's paths come first, then each --owned-file's, in the order typed. Each path is checked as typed, naming
 * the option and the value, before anything is sent (textRules.ts, the rule the daemon holds it to).
 */
import { InvalidArgumentError, Option } from 'commander';
import { repoPathProblem } from '../../core/textRules.js';
import { list } from './common.js';

/** The two options; `replaces` for `task edit`, where the paths given are the task's new list. */
export function ownedFilesOptions(replaces: boolean): [Option, Option] {
  const which = replaces ? 'the paths given replace the list' : 'repeatable';
  return [
    new Option('--owned-files <paths>', `comma-separated repository paths this task may change (${which}; a path that holds a comma: --owned-file)`).argParser(parseList),
    new Option('--owned-file <path>', `one repository path this task may change, taken whole, commas and spaces kept (repeat it for each path${replaces ? '; with --owned-files, together they replace the list' : ''})`).argParser(parsePath),
  ];
}

function checked(path: string, what: string): string {
  const problem = repoPathProblem(path);
  if (problem) throw new InvalidArgumentError(`${what} ${problem}.`);
  return path;
}

/** "a, b,c" as ["a", "b", "c"], after the paths of an earlier --owned-files; empty items are skipped, as always. */
function parseList(value: string, previous: unknown): string[] {
  const paths = list(value);
  if (!paths.length) throw new InvalidArgumentError('It names no path (to clear the list, task edit takes --no-owned-files).');
  for (const p of paths) checked(p, `The path ${JSON.stringify(p)}`);
  return [...(Array.isArray(previous) ? (previous as string[]) : []), ...paths];
}

function parsePath(value: string, previous: unknown): string[] {
  return [...(Array.isArray(previous) ? (previous as string[]) : []), checked(value, 'The path')];
}

/**
 * The ownedFiles the options ask for: undefined when neither is given, [] for --no-owned-files (task edit), else the
 * list's paths then each --owned-file's. --no-owned-files with --owned-file asks for two things: refused.
 */
export function ownedFilesGiven(opts: { ownedFiles?: string[] | false; ownedFile?: string[] }): string[] | undefined {
  if (opts.ownedFiles === false) {
    if (opts.ownedFile) throw new InvalidArgumentError('--no-owned-files clears the owned files and --owned-file sets them: give one or the other.');
    return [];
  }
  if (!opts.ownedFiles && !opts.ownedFile) return undefined;
  return [...(opts.ownedFiles ?? []), ...(opts.ownedFile ?? [])];
}
