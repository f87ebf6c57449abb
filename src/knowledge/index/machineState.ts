/**
 * What Maestro writes under `.workflow/` that is this machine's state, not the project's knowledge: the search
 * index (SQLite, with its WAL files), lock files, the active-run pointer, the session run links (symlinks into
 * $MAESTRO_HOME's run folders), the tasks' sessions and the audit's backups. Specs and knowhow stay tracked: they are what the team
 * shares. A task's session folder ignores itself (its own `.gitignore`, knowledge/lifecycle/bridge.ts); a person's
 * own sessions are theirs to commit.
 *
 * `maestro init` adds these lines to the repository's .gitignore. A repository Maestro was not init'ed in (a
 * maestro-flow project registered as it is) would list them in `git status`, one `git add -A` from a commit:
 * `excludeMachineState` adds them to the repository's own `info/exclude`, git's place for what one machine ignores,
 * which is not committed and covers every worktree of the repository.
 */
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

export const MACHINE_STATE_LINES = [
  '.workflow/.maestro-index.db',
  '.workflow/.maestro-index.db-*',
  '.workflow/**/*.lock',
  '.workflow/**/*.lock-*',
  '.workflow/sessions/.active-run',
  '.workflow/sessions/*/runs/',
  // A task's session (knowledge/lifecycle/bridge.ts sessionIdFor): it ignores itself with its own .gitignore, but
  // one made before that file was written (an earlier version) stayed in git status.
  '.workflow/sessions/task-*/',
  '.workflow/.trash/',
];

const HEADER = "# Maestro: this machine's state under .workflow/ (added by Maestro; the repository's .gitignore may say it too)";

/**
 * Adds the lines `info/exclude` lacks, for the `.workflow/` at `workflowDir`, once per repository. Only in a
 * repository's own checkout (a `.git` folder at its top): a linked worktree's `.git` file is the agent's to edit and
 * could name any folder, and the repository's exclude covers its worktrees. Never through a link (the `info`
 * folder or the file), and nothing is said when it cannot be written: the lines only keep `git status` quiet.
 */
export function excludeMachineState(workflowDir: string): void {
  const top = checkoutTop(dirname(workflowDir));
  if (!top) return;
  const info = join(top, '.git', 'info');
  const file = join(info, 'exclude');
  const prefix = relative(top, dirname(workflowDir)).split(sep).filter(Boolean).map((p) => `${p}/`).join('');
  const lines = MACHINE_STATE_LINES.map((l) => `/${prefix}${l}`);
  try {
    if (existsSync(info) ? !lstatSync(info).isDirectory() : (mkdirSync(info), false)) return;
    const present = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const have = new Set(present.split('\n').map((l) => l.trim()));
    const missing = lines.filter((l) => !have.has(l));
    if (!missing.length) return;
    const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
    try {
      const lead = present && !present.endsWith('\n') ? '\n' : '';
      writeSync(fd, `${lead}${have.has(HEADER) ? '' : `${HEADER}\n`}${missing.join('\n')}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // a read-only repository, a link in the way: git status lists the files, nothing worse
  }
}

/** The folder holding `.git` as a folder, from `dir` up; null when the first `.git` met is a file (a worktree, a submodule) or none is. */
function checkoutTop(dir: string): string | null {
  for (let at = dir; ; at = dirname(at)) {
    const git = join(at, '.git');
    if (existsSync(git)) return lstatSync(git).isDirectory() ? at : null;
    if (dirname(at) === at) return null;
  }
}
