/**
 * What a task parked by a merge conflict is left with, for its detail (`mergeConflict`), so that `task show` and
 * the board name the ways out (core/mergeConflictWays.ts): its branch and where it is checked out, the files that
 * conflicted, the conflict runs it had. And the check of a retry naming the commit that resolved it by hand: on a
 * project's own repository the branch must be at that commit now, or the retry would only park the task again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { parkedByConflict, type MergeConflictPark } from '../../core/mergeConflictWays.js';
import type { Run, Task } from '../../core/types.js';
import { baseBranchOf, remoteOf } from '../../daemon/repos.js';
import { git } from '../../git/git.js';
import { mergeInProgress } from '../../git/merge.js';
import { worktreeDirName, worktreeRoot } from '../../git/worktree.js';
import { conflictedFiles } from '../../store/ops/conflictRetry.js';
import type { Store } from '../../store/store.js';
import type { ApiDeps } from '../deps.js';
import { branchOf } from './reviewData.js';

export async function mergeConflictPark(deps: Pick<ApiDeps, 'store' | 'home'>, task: Task, runs: readonly Run[]): Promise<MergeConflictPark | null> {
  if (!parkedByConflict(task)) return null;
  const project = await deps.store.projects.get(task.projectId);
  const path = deps.home ? join(worktreeRoot(deps.home, project.id), worktreeDirName(task.id, task.version)) : null;
  const worktree = path && existsSync(join(path, '.git')) ? path : null;
  return {
    branch: branchOf(task),
    baseBranch: baseBranchOf(project),
    remote: remoteOf(project),
    worktree,
    midMerge: worktree ? await mergeInProgress(worktree) : false,
    files: await conflictedFiles(deps.store.db, task.id),
    conflictRuns: runs.filter((r) => r.kind === 'conflict').length,
  };
}

/** A retry naming `commit`: refused, changing nothing, when the project's own repository has the branch elsewhere. */
export async function checkResolution(store: Store, task: Task, commit: string): Promise<void> {
  const project = await store.projects.get(task.projectId);
  if (remoteOf(project) || !parkedByConflict(task)) return; // a shared remote's branch is the train's to fetch and check
  const branch = branchOf(task);
  const tip = await git(project.repoPath, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { okCodes: [1] });
  const at = tip.code === 0 ? tip.stdout.trim() : null;
  if (at === commit) return;
  throw new MaestroError('BAD_INPUT', `Nothing was retried: ${branch} is ${at ? `at ${at.slice(0, 12)}` : 'not in the project\'s repository'}, not at ${commit.slice(0, 12)}. Commit your resolution on ${branch}, then name that commit (git rev-parse HEAD in its worktree).`, {
    details: { taskId: task.id, branch, commit, tip: at },
  });
}
