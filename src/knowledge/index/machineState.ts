/**
 * What Maestro writes under `.workflow/` that is this machine's state, not the project's knowledge: the search
 * index (SQLite, with its WAL files), lock files, the active-run pointer, the tasks' sessions (whose runs link
 * into $MAESTRO_HOME's run folders; each also ignores itself with its own `.gitignore`, knowledge/lifecycle/bridge.ts)
 * and the audit's backups and its log. Specs and knowhow stay tracked: they are what the team shares. A person's own sessions
 * and their runs are theirs to commit (maestro-flow repositories commit them): no line names them.
 *
 * `maestro init` adds these lines to the repository's .gitignore. A repository Maestro was not init'ed in (a
 * maestro-flow project registered as it is) would list them in `git status`, one `git add -A` from a commit:
 * `excludeMachineState` adds the names only Maestro makes (EXCLUDE_LINES) to the repository's own `info/exclude`,
 * git's place for what one machine ignores, which is not committed and covers every worktree of the repository.
 */
import { dirname } from 'node:path';
import { addToGitExclude } from '../../lib/gitExclude.js';

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
  // `knowledge audit --apply`'s log (audit-log.jsonl, FORMATS §4.6): each line names a backup under .trash/, which
  // is this machine's; maestro-flow writes the same folder and keeps all of `.workflow/` out of version control.
  '.workflow/.knowledge-audit/',
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

const HEADER = "# Maestro: this machine's state under .workflow/ (added by Maestro; the repository's .gitignore may say it too)";

/** Adds the lines `info/exclude` lacks, for the `.workflow/` at `workflowDir` (lib/gitExclude.ts says where and how). */
export function excludeMachineState(workflowDir: string): void {
  addToGitExclude(dirname(workflowDir), EXCLUDE_LINES, HEADER);
}
