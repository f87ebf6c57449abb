/**
 * The only code that changes the main checkout: merging a finished task
 * branch into the base branch, called by the daemon's MergeCoordinator. It
 * refuses a dirty checkout or one on another branch, and never leaves main
 * half-merged: a conflicting merge is aborted and reported.
 */
import { MaestroError } from '../core/errors.js';
import { assertRepository, currentBranch, git, revParse, trackedChanges } from './git.js';

export interface MergeOptions {
  repoPath: string;
  branch: string;
  baseBranch: string;
  /** 'ff-only' refuses anything but a fast-forward; 'merge' fast-forwards when it can, else makes a merge commit; 'no-ff' always makes one. */
  strategy: 'ff-only' | 'merge' | 'no-ff';
  message?: string;
}

export interface MergeOutcome {
  sha: string;
  fastForward: boolean;
  previousSha: string;
}

export async function mergeIntoMain(options: MergeOptions): Promise<MergeOutcome> {
  const { repoPath, branch, baseBranch } = options;
  await assertRepository(repoPath);
  const onBranch = await currentBranch(repoPath);
  if (onBranch !== baseBranch) {
    throw new MaestroError('DIRTY_MAIN', `the main checkout ${repoPath} is on ${onBranch ?? 'a detached HEAD'}, not ${baseBranch}; check out ${baseBranch} there before merging`, {
      details: { repoPath, branch: onBranch, baseBranch },
    });
  }
  const dirty = await trackedChanges(repoPath);
  if (dirty.length) {
    throw new MaestroError('DIRTY_MAIN', `the main checkout ${repoPath} has uncommitted changes (${dirty.slice(0, 5).map((l) => l.slice(3)).join(', ')}); commit or stash them before merging ${branch}`, {
      details: { repoPath, files: dirty.map((l) => l.slice(3)) },
    });
  }
  const previousSha = await revParse(repoPath, 'HEAD');
  const branchSha = await revParse(repoPath, branch);
  const { code: ffCode } = await git(repoPath, ['merge-base', '--is-ancestor', previousSha, branchSha], { okCodes: [1] });
  const canFastForward = ffCode === 0;
  if (options.strategy === 'ff-only' && !canFastForward) {
    throw new MaestroError('NOT_FAST_FORWARD', `${branch} does not contain ${baseBranch}'s latest commit; bring ${baseBranch} into it (a conflict run) before merging`, {
      details: { branch, baseBranch },
    });
  }
  const message = options.message ?? `Merge ${branch}`;
  const mode = options.strategy === 'no-ff' || !canFastForward ? ['--no-ff', '-m', message] : ['--ff-only'];
  const { code, stdout, stderr } = await git(repoPath, ['merge', ...mode, '--end-of-options', branch], { okCodes: [1] });
  if (code !== 0) {
    await git(repoPath, ['merge', '--abort'], { okCodes: [128] });
    throw new MaestroError('MERGE_CONFLICT', `merging ${branch} into ${baseBranch} conflicts; main is unchanged: ${(stdout + stderr).trim().split('\n').slice(-3).join(' ')}`, {
      details: { branch, baseBranch },
    });
  }
  return { sha: await revParse(repoPath, 'HEAD'), fastForward: !mode.includes('--no-ff'), previousSha };
}

/** Conflict pipeline only: starts a real merge of `base` into the worktree and lists the conflicted files. */
export async function startMerge(worktree: string, base: string): Promise<{ clean: boolean; conflictedFiles: string[] }> {
  const { code } = await git(worktree, ['merge', '--no-ff', '--no-commit', '--end-of-options', base], { okCodes: [1] });
  const { stdout } = await git(worktree, ['diff', '--name-only', '--diff-filter=U']);
  const conflictedFiles = stdout.split('\n').filter(Boolean);
  return { clean: code === 0 && conflictedFiles.length === 0, conflictedFiles };
}

/** True while a merge started by startMerge is unfinished. */
export async function mergeInProgress(worktree: string): Promise<boolean> {
  const { code } = await git(worktree, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { okCodes: [1] });
  return code === 0;
}

/** Stages everything and commits; returns the new HEAD, or null when there was nothing to commit. */
export async function commitAll(worktree: string, message: string): Promise<string | null> {
  await git(worktree, ['add', '-A']);
  const merging = await mergeInProgress(worktree);
  const { code } = await git(worktree, ['diff', '--cached', '--quiet'], { okCodes: [1] });
  if (code === 0 && !merging) return null;
  await git(worktree, ['commit', '--no-verify', '-m', message]);
  return (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim();
}
