/**
 * What a merge train leaves to do once its work is in main: each task's worktree removed, and its branch
 * too unless the project keeps branches (`keepBranches`), here and on the shared remote (where most went with
 * the train's push of main already). Main holds the commits, so the change stays visible
 * (GET /api/tasks/:id/diff). A failure is logged; the periodic prune tries the worktree again.
 */
import { join } from 'node:path';
import { coerceError } from '../core/errors.js';
import type { Project, Task } from '../core/types.js';
import { git } from '../git/git.js';
import { maintainAtPace } from '../git/maintenance.js';
import { tipsOf } from '../git/merge.js';
import { pastOtherAdds, removeWorktree } from '../git/worktree.js';
import { remoteOf, type ProjectRepos } from './repos.js';
import type { Store } from '../store/store.js';

/** What is left to do once a train is in: worktrees and branches to clean up, conflict runs to open. */
export interface Landed {
  repo: string;
  cleanups: Array<{ task: Task; branch: string }>;
  /** `files`: those in conflict, as git named them (none when it did not say). */
  conflicts: Array<{ task: Task; branch: string; message: string; files: string[] }>;
  /** Cars left out for a merge check: the checks run on their merge with main before they land (mergeQueue.ts). */
  checks: Array<{ task: Task; head: string }>;
  /** Branches that left the shared remote in the train's push of main. */
  gone: Set<string>;
}

export interface CleanupDeps {
  store: Store;
  repos: ProjectRepos;
  /** Where the project's task worktrees live. */
  worktreeRoot?: (projectId: string) => string;
  onError: (err: Error) => void;
}

/** Cleans up a train's merged work, in the clone (which a cleanup must have to itself) or the project's repository. */
export async function cleanUpLanded(deps: CleanupDeps, project: Project, landed: Landed): Promise<void> {
  const { repo, cleanups } = landed;
  if (!cleanups.length) return;
  const keep = project.config.keepBranches === true;
  const clean = async () => {
    const cleared: Array<{ task: Task; branch: string; worktree: string | null }> = [];
    for (const c of cleanups) {
      const worktree = await removeTaskWorktree(deps, c.task, project, repo);
      if (worktree !== undefined) cleared.push({ ...c, worktree });
    }
    const deleted = keep ? new Set<string>() : await deleteBranches(repo, cleared.map((c) => c.branch), deps.onError);
    for (const c of cleared) {
      const payload = { worktree: c.worktree, branch: c.branch, branchDeleted: deleted.has(c.branch) };
      await deps.store.events.append({ projectId: project.id, taskId: c.task.id, type: 'git.cleanup', payload }).catch((err: unknown) => deps.onError(coerceError(err)));
    }
    const left = cleanups.map((c) => c.branch).filter((b) => !landed.gone.has(b));
    if (!keep) await deps.repos.deleteRemoteBranches(project, repo, left).catch((err: unknown) => deps.onError(coerceError(err)));
    await maintainAtPace(repo).catch((err: unknown) => deps.onError(coerceError(err)));
  };
  await (remoteOf(project) ? deps.repos.exclusive(project.id, clean) : clean());
}

/**
 * Deletes the train's branches in one git process, which goes on past one it cannot delete (checked out in a
 * worktree of the person's, or one this clone never had) and says so with exit 1: then the branches still there
 * are read back, so that each cleanup event says what became of its branch. git reads every worktree's record first: another run's worktree
 * half-added is waited out.
 */
async function deleteBranches(repo: string, branches: string[], onError: (err: Error) => void): Promise<Set<string>> {
  if (!branches.length) return new Set();
  try {
    const { code, stderr } = await pastOtherAdds(() => git(repo, ['branch', '-D', '--end-of-options', ...branches], { okCodes: [1] }));
    if (code === 0) return new Set(branches);
    // A branch this clone never had ("not found") is gone as well.
    const left = await tipsOf(repo, branches.map((b) => `refs/heads/${b}`));
    if (left.size) onError(new Error(`merged branches not deleted in ${repo}: ${stderr.trim()}`));
    return new Set(branches.filter((b) => !left.has(`refs/heads/${b}`)));
  } catch (err) {
    onError(coerceError(err));
    return new Set();
  }
}

/** Removes the task's worktree (none without a worktree root): its path, or undefined when that failed (told). */
async function removeTaskWorktree(deps: CleanupDeps, task: Task, project: Project, repo: string): Promise<string | null | undefined> {
  const root = deps.worktreeRoot?.(project.id);
  if (!root) return null;
  const path = join(root, `${task.id}-v${task.version}`);
  try {
    await removeWorktree(repo, path);
    return path;
  } catch (err) {
    deps.onError(coerceError(err));
    return undefined;
  }
}
