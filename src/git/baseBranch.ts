/**
 * The branch a project's tasks start from and merge back into (`config.baseBranch`, else `main`), checked
 * when a repository is registered or the setting changes. A repository whose work is on `master` (git's own
 * default name) or that had no commit yet used to be taken, and its first task failed on
 * `git rev-parse main^{commit}`: "fatal: Needed a single revision".
 */
import { MaestroError } from '../core/errors.js';
import { currentBranch, git } from './git.js';

export const DEFAULT_BASE_BRANCH = 'main';

async function branchesOf(repoPath: string): Promise<string[]> {
  const { stdout } = await git(repoPath, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']);
  return stdout.split('\n').filter(Boolean);
}

const listed = (branches: string[]) => branches.slice(0, 10).join(', ') + (branches.length > 10 ? ', …' : '');

/**
 * The base branch for `repoPath`: `asked` when the repository has that branch; with none asked, `main`, or
 * else the branch checked out there (its work is on `master`). Throws BAD_INPUT saying what to do otherwise:
 * an empty repository, a branch it does not have, no `main` and no branch checked out.
 */
export async function baseBranchFor(repoPath: string, asked: string | undefined): Promise<string> {
  const branches = await branchesOf(repoPath);
  if (!branches.length) {
    throw new MaestroError('BAD_INPUT', `${repoPath} has no commit yet: tasks start from its base branch and merge back into it. Make a first commit there (git commit --allow-empty -m "First commit"), then register it.`);
  }
  if (asked !== undefined) {
    if (branches.includes(asked)) return asked;
    throw new MaestroError('BAD_INPUT', `baseBranch "${asked}" is not a branch of ${repoPath} (its branches: ${listed(branches)}); nothing was saved.`);
  }
  if (branches.includes(DEFAULT_BASE_BRANCH)) return DEFAULT_BASE_BRANCH;
  const checkedOut = await currentBranch(repoPath);
  if (checkedOut && branches.includes(checkedOut)) return checkedOut;
  throw new MaestroError('BAD_INPUT', `${repoPath} has no branch ${DEFAULT_BASE_BRANCH} and no branch checked out: name the one tasks start from and merge into (config.baseBranch; its branches: ${listed(branches)}).`);
}
