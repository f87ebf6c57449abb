/**
 * The ways out of a merge conflict left to a person (the task detail's `mergeConflict`): a task that approved work
 * brought to needs_attention while merging, because main and its branch still conflict after its conflict runs
 * (daemon/conflictRuns.ts MAX_CONFLICT_RUNS), a conflict run failed (markers left, files changed beyond the
 * conflicted ones, its resolution rejected), or the on:conflict hook asks for a person. A plain retry merges
 * again and meets the same conflict; these are the ways that end it, as the commands a person types:
 *
 * - resolve by hand on the task's branch (in its worktree when it is still there), commit, and
 *   `maestro task retry <id> --commit <sha>`: the train merges that commit, with no conflict run;
 * - `maestro task retry <id> --fresh`: a new version of the task, run from the current main (the branch's work
 *   is not carried over; the approved plan is);
 * - `maestro task cancel <id>`.
 *
 * Pure and zod-free: `maestro task show` (cli/commands/mergeConflictAdvice.ts) prints them, the board may too.
 */
import { shellWord } from './diffGateWays.js';

/** How lastRunError begins for a task parked by a merge conflict (as `DIFF_GATE:` for the diff gate's refusals). */
export const MERGE_CONFLICT_PREFIX = 'MERGE_CONFLICT:';

/** Whether the task waits for a person because of a merge conflict (its last error says so). */
export function parkedByConflict(task: { status: string; lastRunError: string | null }): boolean {
  return task.status === 'needs_attention' && (task.lastRunError?.startsWith(MERGE_CONFLICT_PREFIX) ?? false);
}

/** What the detail says of such a task. */
export interface MergeConflictPark {
  /** The task's branch, which holds the approved work. */
  branch: string;
  /** The branch it is merged into. */
  baseBranch: string;
  /** The shared remote the branch and main live on, or null for the project's own repository. */
  remote: string | null;
  /** The task's worktree on this daemon's machine when it is still there (the branch checked out), else null. */
  worktree: string | null;
  /**
   * Whether that worktree is in the middle of merging the base branch: a conflict run that failed (markers left,
   * files changed beyond the conflicted ones, the agent failing) leaves its merge there as it stopped, and a
   * `git merge` in it then fails ("Merging is not possible because you have unmerged files").
   */
  midMerge: boolean;
  /** The files that conflicted at the last merge (the newest merge.conflict event's), as git names them. */
  files: string[];
  /** Conflict runs the task had. */
  conflictRuns: number;
}

/** `maestro task retry <id> --commit <sha>`: the train merges the commit you made on the branch. */
export const resolvedRetryCommand = (taskId: string, sha = '<sha>'): string => `maestro task retry ${taskId} --commit ${sha}`;
/** `maestro task retry <id> --fresh`: a new version, run from the current main. */
export const freshRetryCommand = (taskId: string): string => `maestro task retry ${taskId} --fresh`;
export const cancelCommand = (taskId: string): string => `maestro task cancel ${taskId}`;

/**
 * The git commands that merge main into the branch by hand, in two blocks a person pastes: `merge` up to the
 * conflict, then, once the files are resolved, `commit` down to the commit to name. No comment among them (zsh
 * takes `#` for an argument unless interactivecomments is on), and nothing a block runs past a step that needs the
 * person (a commit before the files are resolved would fail, and `rev-parse` would print the old tip). In the
 * worktree when it is there; else in a worktree of its own made from the project's checkout (checking the branch out
 * there would leave the checkout off main, and the merge waits for it to be on main). On a shared remote: from your
 * clone, the remote's main, and a push of the branch. A worktree a failed conflict run left mid-merge first drops that
 * merge (`git merge --abort`, the agent's half-resolution with it), so the person's merge starts from the branch.
 */
export function resolveByHandCommands(taskId: string, park: MergeConflictPark): { merge: string[]; commit: string[] } {
  const origin = park.remote ? 'origin' : null;
  const main = origin ? `${origin}/${park.baseBranch}` : park.baseBranch;
  const where = park.worktree && !origin
    ? [`cd ${shellWord(park.worktree)}`, ...(park.midMerge ? ['git merge --abort'] : [])]
    : origin
      ? [`git fetch ${origin}`, `git worktree add maestro-resolve-${taskId} ${shellWord(park.branch)}`, `cd maestro-resolve-${taskId}`]
      : [`git worktree add ../maestro-resolve-${taskId} ${shellWord(park.branch)}`, `cd ../maestro-resolve-${taskId}`];
  return {
    merge: [...where, `git merge ${shellWord(main)}`],
    // The files git named, as shell words; without them, every tracked file changed (the conflicted ones are).
    commit: [
      park.files.length ? `git add -- ${park.files.map(shellWord).join(' ')}` : 'git add -u',
      'git commit --no-edit',
      ...(origin ? [`git push ${origin} ${shellWord(park.branch)}`] : []),
      'git rev-parse HEAD',
    ],
  };
}
