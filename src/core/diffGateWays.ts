/**
 * The ways out of a change the diff gate refused (the task detail's `diffGate`), as the commands and settings a
 * person types: the `.maestro/config.json` fragment that raises a limit, the `task edit` that adds the files outside
 * ownedFiles, narrowing the task, retrying it. `maestro task show` (cli/commands/diffGateAdvice.ts) and the board's
 * task detail (web DiffGatePanel) both print them, so they are written once, here: pure, the web app bundles it.
 */

/** How many files outside ownedFiles the suggested `task edit` names; past that, `task diff --stat` lists them. */
export const EDIT_NAMES_AT_MOST = 10;

/** Where a project's limits are set, from its repository's root; a change there is committed on main. */
export const PROJECT_CONFIG_FILE = '.maestro/config.json';

/** The limits of `.maestro/config.json` a refusal can name with the number to raise them to. */
export type RaisableLimit = 'maxDiffLines' | 'maxDiffFiles' | 'maxFileBytes';

/** `value` as one shell word: as it is when only safe characters, else in single quotes. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The `.maestro/config.json` fragment that sets `limits.<key>` to `to`. */
export function raiseLimitJson(key: RaisableLimit, to: number): string {
  return `{"limits": {"${key}": ${to}}}`;
}

/**
 * The `task edit` that adds the files outside ownedFiles to them (a file already there once). `named` is false
 * when there are more than EDIT_NAMES_AT_MOST or the refusal did not name them all: the command then says
 * `<paths>`, and diffStatCommand lists them.
 */
export function ownedFilesEdit(taskId: string, ownedFiles: readonly string[], outside: { count: number; files: readonly string[] }): { command: string; named: boolean } {
  const named = outside.count <= EDIT_NAMES_AT_MOST && outside.files.length === outside.count;
  const paths = named ? shellWord([...new Set([...ownedFiles, ...outside.files])].join(',')) : '<paths>';
  return { command: `maestro task edit ${taskId} --owned-files ${paths}`, named };
}

export const diffStatCommand = (taskId: string): string => `maestro task diff ${taskId} --stat`;
export const narrowCommand = (taskId: string): string => `maestro task edit ${taskId} --spec "…"`;
export const retryCommand = (taskId: string): string => `maestro task retry ${taskId}`;
