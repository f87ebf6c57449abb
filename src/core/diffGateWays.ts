/**
 * The ways out of a change the diff gate refused (the task detail's `diffGate`), as the commands and settings a
 * person types: the `.maestro/config.json` fragment that raises a limit, the `task edit` that adds the files outside
 * ownedFiles, narrowing the task, retrying it. `maestro task show` (cli/commands/diffGateAdvice.ts) and the board's
 * task detail (web DiffGatePanel) both print them, so they are written once, here: pure, the web app bundles it.
 */
import { CONTROL } from './textRules.js';

/** How many files outside ownedFiles the suggested `task edit` names; past that, `task diff --stat` lists them. */
export const EDIT_NAMES_AT_MOST = 10;

/** Where a project's limits are set, from its repository's root; a change there is committed on main. */
export const PROJECT_CONFIG_FILE = '.maestro/config.json';

/** The limits of `.maestro/config.json` a refusal can name with the number to raise them to. */
export type RaisableLimit = 'maxDiffLines' | 'maxDiffFiles' | 'maxFileBytes';

/**
 * Characters a person cannot read back from a command on a screen, or that a copy may change: controls, zero-width
 * and bidirectional ones (what visible() shows as `\u{…}`, so the command would name `\u{200b}` literally), the
 * other invisible ones, and spaces other than ' ' (a browser's copy turns a no-break space into a space).
 */
const UNSEEN = /(?! )[\p{C}\p{Z}\p{Default_Ignorable_Code_Point}]/u;

/**
 * `value` as one shell word: as it is when only safe characters, else in single quotes. A value holding a
 * character of UNSEEN is written in bash's $'…' (zsh and ksh read it too), that character as its UTF-8 bytes
 * (`\xe2\x80\x8b` for U+200B): the command shows no character it does not spell out, and it pastes back to the very
 * name. Not `\u200b`: bash writes that as the six characters `\u200B` where the locale is not UTF-8 (LANG=C).
 */
export function shellWord(value: string): string {
  if (/^[\w@%+=:,./-]+$/.test(value)) return value;
  if (!UNSEEN.test(value)) return `'${value.replace(/'/g, `'\\''`)}'`;
  const spelled = [...value].map((ch) => (UNSEEN.test(ch) ? utf8Escapes(ch) : ch === '\\' || ch === "'" ? `\\${ch}` : ch));
  return `$'${spelled.join('')}'`;
}

const utf8Escapes = (ch: string): string => [...new TextEncoder().encode(ch)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');

/** The `.maestro/config.json` fragment that sets `limits.<key>` to `to`. */
export function raiseLimitJson(key: RaisableLimit, to: number): string {
  return `{"limits": {"${key}": ${to}}}`;
}

/**
 * The options of `task create` / `task edit` that give exactly `paths`, as shell words. One `--owned-files a,b` when
 * that comma list reads back as them; else an `--owned-file` for each, taken whole: a path that holds a comma (the
 * list would split it), that begins or ends with white space (the list trims each), or that begins with '-' (written
 * `--owned-file=-x`, or the CLI could take a path named like one of its options for that option).
 */
export function ownedFilesArgs(paths: readonly string[]): string {
  if (paths.every((p) => !p.includes(',') && p.trim() === p && !p.startsWith('-'))) return `--owned-files ${shellWord(paths.join(','))}`;
  return paths.map((p) => `--owned-file${p.startsWith('-') ? '=' : ' '}${shellWord(p)}`).join(' ');
}

const EACH_CONTROL = new RegExp(CONTROL, 'g');

/**
 * The `task edit` that adds the files outside ownedFiles to them (a file already there once), pasting back to
 * exactly those paths (ownedFilesArgs). ownedFiles holds no control character (textRules.ts), which git allows in a
 * name: such a file is added as the glob that has '?' (any one character but '/') for each, which covers it.
 * `named` is false when there are more than EDIT_NAMES_AT_MOST or the refusal did not name them all: the command
 * then says `<paths>`, and diffStatCommand lists them.
 */
export function ownedFilesEdit(taskId: string, ownedFiles: readonly string[], outside: { count: number; files: readonly string[] }): { command: string; named: boolean } {
  const named = outside.count <= EDIT_NAMES_AT_MOST && outside.files.length === outside.count;
  const added = outside.files.map((f) => f.replace(EACH_CONTROL, '?'));
  const paths = named ? ownedFilesArgs([...new Set([...ownedFiles, ...added])]) : '--owned-files <paths>';
  return { command: `maestro task edit ${taskId} ${paths}`, named };
}

export const diffStatCommand = (taskId: string): string => `maestro task diff ${taskId} --stat`;
export const narrowCommand = (taskId: string): string => `maestro task edit ${taskId} --spec "…"`;
export const retryCommand = (taskId: string): string => `maestro task retry ${taskId}`;
