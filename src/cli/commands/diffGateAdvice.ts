/**
 * What `task show` says of a change the diff gate refused (the task detail's `diffGate`): each thing it refused
 * with the ways out that fit it, and what a retry does. Only what is true of this refusal: a limit it went over
 * is named by its key in `.maestro/config.json`, files outside ownedFiles by the edit that adds them; files too
 * large and gitlinks have their own words in the last error. A retry does not start over: the run committed the
 * agent's work before the gate looked at it, and the next run starts from that commit, so narrowing the task
 * means saying what to take out. Except a refusal before the commit (`committed: false`: a file too large or a git
 * repository the agent made, still in the worktree): nothing is on the branch, and the retry starts from its last
 * commit. The commands and settings are written once in core/diffGateWays.ts, which the board's task detail prints too.
 */
import type { Task } from '../../core/types.js';
import { diffStatCommand, narrowCommand, ownedFilesEdit, PROJECT_CONFIG_FILE, raiseLimitJson, retryCommand } from '../../core/diffGateWays.js';
import type { DiffGateRefusal } from '../../api/wire/responses.js';
import { oneLine } from '../../lib/visible.js';

function raise(key: 'maxDiffLines' | 'maxDiffFiles', what: string, { changed, limit }: { changed: number; limit: number }): string {
  return `${changed} ${what}, over limits.${key} (${limit}): raise limits.${key} to ${changed} or more in the project's ${PROJECT_CONFIG_FILE} (${raiseLimitJson(key, changed)}) and commit it.`;
}

/** The first three of `names` (the agent chose them: each on one line, as git allows a line break in one), then how many more of `count`. */
const firstNames = (names: readonly string[], count: number): string => names.slice(0, 3).map(oneLine).join(', ') + (count > 3 ? `, and ${count - 3} more` : '');

function addOwned(task: Task, outside: { count: number; files: string[] }): string {
  const { count, files } = outside;
  const named = firstNames(files, count);
  const edit = ownedFilesEdit(task.id, task.ownedFiles, outside);
  const command = edit.named ? oneLine(edit.command) : `${oneLine(edit.command)} (${diffStatCommand(task.id)} lists the change's files)`;
  return `${count} file(s) outside the task's owned files (${task.ownedFiles.map(oneLine).join(', ')}): ${named}. If the task may change them, add them: ${command}`;
}

export function diffGateAdvice(task: Task, gate: DiffGateRefusal): string {
  const ways: string[] = [];
  if (gate.lines) ways.push(raise('maxDiffLines', 'lines changed', gate.lines));
  if (gate.files) ways.push(raise('maxDiffFiles', 'files changed', gate.files));
  if (gate.outsideOwned) ways.push(addOwned(task, gate.outsideOwned));
  if (gate.lines || gate.files || gate.outsideOwned) {
    ways.push(`Narrow the task (${narrowCommand(task.id)}): the retry starts from the refused commit, so say what to take out of it.`);
  }
  if (!gate.committed) ways.push(...uncommittedWays(gate));
  else if (gate.largeFiles || gate.strayGitlinks.length) ways.push('Files too large (limits.maxFileBytes) or git repositories committed as gitlinks: the last error below says what to do in the worktree.');
  return [
    `The diff gate refused the change of run ${gate.runId}. Ways out:`,
    ...ways.map((w) => `  - ${w}`),
    gate.committed
      ? `Then ${retryCommand(task.id)} starts a new run on ${oneLine(gate.branch)}, which keeps the refused commit: the agent goes on from it, and the checks and the diff gate look at the whole branch again.`
      : `Then ${retryCommand(task.id)} starts a new run from the last commit of ${oneLine(gate.branch)}, setting aside what is left uncommitted in the worktree (the run names the ref to restore it from)${gate.largeFiles ? '; while a file past limits.maxFileBytes is still there, the retry is refused again' : ''}.`,
  ].join('\n');
}

/** A refusal before the commit: the file or the repository is in the worktree, never on the branch (the last error names the worktree). */
function uncommittedWays(gate: DiffGateRefusal): string[] {
  const ways: string[] = [];
  if (gate.largeFiles) {
    const { limit, files } = gate.largeFiles;
    const biggest = Math.max(...files.map((f) => f.bytes));
    ways.push(`${files.length} file(s) larger than limits.maxFileBytes (${limit} bytes), left uncommitted in the worktree (${firstNames(files.map((f) => f.path), files.length)}); nothing was committed. Delete it in the worktree (and add it to .gitignore if a tool makes it), or raise limits.maxFileBytes to ${biggest} or more in the project's ${PROJECT_CONFIG_FILE} (${raiseLimitJson('maxFileBytes', biggest)}) and commit it.`);
  }
  if (gate.strayGitlinks.length) {
    const n = gate.strayGitlinks.length;
    ways.push(`${n} git repositor${n === 1 ? 'y' : 'ies'} made inside the worktree (${firstNames(gate.strayGitlinks, n)}); nothing was committed. Maestro moved its .git out of the worktree and left its files there: in the worktree, commit them as files (or add a submodule with \`git submodule add <url>\`).`);
  }
  return ways;
}
