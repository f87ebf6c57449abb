/**
 * What Maestro writes under `.workflow/` that is this machine's state, not the project's knowledge: the search
 * index (SQLite, with its WAL files), lock files, the active-run pointer, the tasks' sessions (whose runs link
 * into $MAESTRO_HOME's run folders; each also ignores itself with its own `.gitignore`, knowledge/lifecycle/bridge.ts)
 * and the audit's backups. Specs and knowhow stay tracked: they are what the team shares. A person's own sessions
 * and their runs are theirs to commit (maestro-flow repositories commit them): no line names them.
 *
 * `maestro init` adds these lines to the repository's .gitignore. A repository Maestro was not init'ed in (a
 * maestro-flow project registered as it is) would list them in `git status`, one `git add -A` from a commit:
 * `excludeMachineState` adds the names only Maestro makes (EXCLUDE_LINES) to the repository's own `info/exclude`,
 * git's place for what one machine ignores, which is not committed and covers every worktree of the repository.
 */
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

export const MACHINE_STATE_LINES = [
  '.workflow/.maestro-index.db',
  '.workflow/.maestro-index.db-*',
  '.workflow/**/*.lock',
  '.workflow/**/*.lock-*',
  '.workflow/sessions/.active-run',
  // A task's session (knowledge/lifecycle/bridge.ts sessionIdFor: task-t-<hex>): it ignores itself with its own
  // .gitignore, but one made before that file was written (an earlier version) stayed in git status.
  '.workflow/sessions/task-t-*/',
  '.workflow/.trash/',
];

/**
 * What goes into info/exclude unasked: only names Maestro alone makes. The broader lines above are for a person who
 * ran `maestro init`; in a maestro-flow repository a person's own sessions, their runs (committed there) and a
 * `*.lock` of theirs must stay in git status (a trial: info/exclude covers every worktree and leaves no trace in the
 * repository).
 */
export const EXCLUDE_LINES = [
  '.workflow/.maestro-index.db',
  '.workflow/.maestro-index.db-*',
  '.workflow/.maestro-corpus.lock',
  '.workflow/.maestro-corpus.lock-*',
  '.workflow/sessions/task-t-*/',
];

/** A folder name written into a pattern as it is: none of git's pattern characters, spaces, or line breaks. */
const PLAIN_PART = /^[A-Za-z0-9._-]+$/;

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
  const parts = relative(top, dirname(workflowDir)).split(sep).filter(Boolean);
  // A folder named "pkg\n*\n#" would have added a line `*`, hiding every untracked file: such a folder gets none.
  if (!parts.every((p) => PLAIN_PART.test(p))) return;
  const lines = EXCLUDE_LINES.map((l) => `/${parts.map((p) => `${p}/`).join('')}${l}`);
  try {
    if (!existsSync(info)) mkdirSync(info);
    else if (!lstatSync(info).isDirectory()) return;
    // Read only a plain file: a link is not written through anyway, and a FIFO would hold the reader for good.
    const kind = lstatSync(file, { throwIfNoEntry: false });
    if (kind && !kind.isFile()) return;
    const present = kind ? readFileSync(file, 'utf8') : '';
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
