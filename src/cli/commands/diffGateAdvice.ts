/**
 * What `task show` says of a change the diff gate refused (the task detail's `diffGate`): each thing it refused
 * with the ways out that fit it, and what a retry does. Only what is true of this refusal: a limit it went over
 * is named by its key in `.maestro/config.json`, files outside ownedFiles by the edit that adds them; files too
 * large and gitlinks have their own words in the last error. A retry does not start over: the run committed the
 * agent's work before the gate looked at it, and the next run starts from that commit, so narrowing the task
 * means saying what to take out. The commands and settings are written once in core/diffGateWays.ts, which the
 * board's task detail prints too.
 */
import type { Task } from '../../core/types.js';
import { diffStatCommand, narrowCommand, ownedFilesEdit, PROJECT_CONFIG_FILE, raiseLimitJson, retryCommand } from '../../core/diffGateWays.js';
import type { DiffGateRefusal } from '../../api/wire/responses.js';
import { oneLine } from '../../lib/visible.js';

function raise(key: 'maxDiffLines' | 'maxDiffFiles', what: string, { changed, limit }: { changed: number; limit: number }): string {
  return `${changed} ${what}, over limits.${key} (${limit}): raise limits.${key} to ${changed} or more in the project's ${PROJECT_CONFIG_FILE} (${raiseLimitJson(key, changed)}) and commit it.`;
}

function addOwned(task: Task, outside: { count: number; files: string[] }): string {
  const { count, files } = outside;
  // The agent chose the names: each on one line, in the list and in the command (git allows a line break in one).
  const named = files.slice(0, 3).map(oneLine).join(', ') + (count > 3 ? `, and ${count - 3} more` : '');
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
  if (gate.largeFiles || gate.strayGitlinks.length) ways.push('Files too large (limits.maxFileBytes) or git repositories committed as gitlinks: the last error below says what to do in the worktree.');
  return [
    `The diff gate refused the change of run ${gate.runId}. Ways out:`,
    ...ways.map((w) => `  - ${w}`),
    `Then ${retryCommand(task.id)} starts a new run on ${oneLine(gate.branch)}, which keeps the refused commit: the agent goes on from it, and the checks and the diff gate look at the whole branch again.`,
  ].join('\n');
}
