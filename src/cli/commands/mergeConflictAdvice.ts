/**
 * What `task show` says of a task parked by a merge conflict (the task detail's `mergeConflict`): what conflicted
 * and the ways out as commands (core/mergeConflictWays.ts). A plain `task retry` merges again and meets the same
 * conflict, and `task reject` is refused (the task is at no gate): before, neither the detail nor the CLI said
 * what ends it.
 */
import { cancelCommand, freshRetryCommand, resolveByHandCommands, resolvedRetryCommand, type MergeConflictPark } from '../../core/mergeConflictWays.js';
import type { Task } from '../../core/types.js';
import { oneLine, visible } from '../../lib/visible.js';

export function mergeConflictAdvice(task: Task, park: MergeConflictPark): string {
  const named = park.files.map((f) => oneLine(f)).join(', ');
  const files = named ? ` in ${named}` : '';
  const where = park.remote
    ? `in your clone of ${visible(park.remote)}`
    : park.worktree
      ? `in the task's worktree${park.midMerge ? ' (the conflict run left it mid-merge: `git merge --abort` drops its attempt)' : ''}`
      : "from the project's checkout (the task's worktree is gone; its branch is kept)";
  const runs = park.conflictRuns ? ` after ${park.conflictRuns} conflict run${park.conflictRuns === 1 ? '' : 's'}` : '';
  const by = resolveByHandCommands(task.id, park);
  const conflicted = named || 'the conflicted files';
  return [
    `${visible(park.baseBranch)} and ${visible(park.branch)} conflict${files}${runs}, and a person must settle it: \`maestro task retry ${task.id}\` alone merges again and meets the same conflict. Ways out:`,
    `  - Resolve it by hand on ${visible(park.branch)}, ${where}:`,
    ...by.merge.map((c) => `      ${c}`),
    `    resolve ${conflicted} (git's conflict markers), then:`,
    ...by.commit.map((c) => `      ${c}`),
    `    then ${resolvedRetryCommand(task.id)} (the commit the last line prints) merges it, with no conflict run.`,
    `  - Run the task again from the current ${visible(park.baseBranch)}: ${freshRetryCommand(task.id)} (a new version on a new branch, its plan kept; nothing of ${visible(park.branch)} is carried over).`,
    `  - Drop it: ${cancelCommand(task.id)}.`,
  ].join('\n');
}
