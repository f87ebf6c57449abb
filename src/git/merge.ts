/**
 * The only code that changes the main checkout: merging a finished task
 * branch into the base branch, called by the daemon's MergeCoordinator. It
 * refuses a dirty checkout or one on another branch, and never leaves main
 * half-merged: a conflicting merge is aborted and reported.
 */
import { MaestroError } from '../core/errors.js';
import { checkoutState, git, revParse } from './git.js';

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
  await assertMainCheckout(options.repoPath, options.baseBranch);
  return mergeBranch(options);
}

/** Refuses a checkout that is not on `baseBranch` or has uncommitted changes: nothing may be merged into it. */
export async function assertMainCheckout(repoPath: string, baseBranch: string): Promise<void> {
  const { branch: onBranch, changes: dirty } = await checkoutState(repoPath);
  if (onBranch !== baseBranch) {
    throw new MaestroError('DIRTY_MAIN', `the main checkout ${repoPath} is on ${onBranch ?? 'a detached HEAD'}, not ${baseBranch}; check out ${baseBranch} there before merging`, {
      details: { repoPath, branch: onBranch, baseBranch },
    });
  }
  if (dirty.length) {
    throw new MaestroError('DIRTY_MAIN', `the main checkout ${repoPath} has uncommitted changes (${dirty.slice(0, 5).map((l) => l.slice(3)).join(', ')}); commit or stash them before merging`, {
      details: { repoPath, files: dirty.map((l) => l.slice(3)) },
    });
  }
}

/**
 * Merges one branch into the checked-out base (call after assertMainCheckout). A train passes `head`
 * (main as its previous merge left it) and `tip` (the branch's commit, read with all the others in
 * one for-each-ref), so a merge costs two git processes: the merge and reading the new HEAD.
 */
export async function mergeBranch(options: MergeOptions & { head?: string; tip?: string }): Promise<MergeOutcome> {
  const { repoPath, branch, baseBranch, strategy } = options;
  const previousSha = options.head ?? (await revParse(repoPath, 'HEAD'));
  const branchSha = options.tip ?? (await revParse(repoPath, branch));
  if (strategy === 'ff-only') {
    const { code } = await git(repoPath, ['merge-base', '--is-ancestor', previousSha, branchSha], { okCodes: [1] });
    if (code !== 0) {
      throw new MaestroError('NOT_FAST_FORWARD', `${branch} does not contain ${baseBranch}'s latest commit; bring ${baseBranch} into it (a conflict run) before merging`, {
        details: { branch, baseBranch },
      });
    }
  }
  // --ff fast-forwards when it can and otherwise commits with the message (whatever merge.ff says in the repository's config).
  const mode = strategy === 'no-ff' ? '--no-ff' : strategy === 'ff-only' ? '--ff-only' : '--ff';
  const message = options.message ?? `Merge ${branch}`;
  // Without auto-maintenance: a train runs one merge after another, and a fetch runs it anyway.
  const { code, stdout, stderr } = await git(repoPath, ['-c', 'maintenance.auto=false', 'merge', mode, '-m', message, '--end-of-options', branchSha], { okCodes: [1] });
  if (code !== 0) {
    await git(repoPath, ['merge', '--abort'], { okCodes: [128] });
    throw new MaestroError('MERGE_CONFLICT', `merging ${branch} into ${baseBranch} conflicts; main is unchanged: ${(stdout + stderr).trim().split('\n').slice(-3).join(' ')}`, {
      details: { branch, baseBranch },
    });
  }
  const sha = await revParse(repoPath, 'HEAD');
  return { sha, fastForward: sha === branchSha && strategy !== 'no-ff', previousSha };
}

/** Every ref under `prefix` (`refs/heads/`, `refs/remotes/origin/`) with the commit it points at, in one git process. */
export async function refTips(repoPath: string, prefix: string): Promise<Map<string, string>> {
  const { stdout } = await git(repoPath, ['for-each-ref', '--format=%(objectname) %(refname)', '--end-of-options', prefix]);
  const tips = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) tips.set(line.slice(at + 1), line.slice(0, at));
  }
  return tips;
}

/** Which of `refs` (full names) `base` already contains, in one git process. */
export async function refsMergedInto(repoPath: string, base: string, refs: string[]): Promise<Set<string>> {
  if (!refs.length) return new Set();
  const { stdout } = await git(repoPath, ['for-each-ref', `--merged=${base}`, '--format=%(refname)', '--end-of-options', ...refs]);
  return new Set(stdout.split('\n').filter(Boolean));
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
