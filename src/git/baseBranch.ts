/**
 * The branch a project's tasks start from and merge back into (`config.baseBranch`, else `main`), checked
 * when a repository is registered or the setting changes. A repository whose work is on `master` (git's own
 * default name) or that had no commit yet used to be taken, and its first task failed on
 * `git rev-parse main^{commit}`: "fatal: Needed a single revision".
 */
import { tmpdir } from 'node:os';
import { MaestroError } from '../core/errors.js';
import { DEFAULT_BASE_BRANCH } from '../core/baseBranch.js';
import { currentBranch, git } from './git.js';

export { DEFAULT_BASE_BRANCH };

/** A repository's branches, and the one its HEAD names (a checkout's, or a remote's default branch). */
export interface Branches {
  /** The repository, as the messages name it. */
  where: string;
  branches: string[];
  head: string | null;
}

export async function localBranches(repoPath: string): Promise<Branches> {
  const { stdout } = await git(repoPath, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']);
  return { where: repoPath, branches: stdout.split('\n').filter(Boolean), head: await currentBranch(repoPath) };
}

/** How long registration waits for a network remote to answer before it leaves the check to each daemon's first sync. */
export const REMOTE_CHECK_STALL_MS = 15_000;

/**
 * A shared remote's branches as it answers `git ls-remote` (no clone), or null when it does not answer (away,
 * refusing, asking for credentials this machine lacks): then each daemon's first sync names a missing branch.
 */
export async function remoteBranches(remote: string, stallMs = REMOTE_CHECK_STALL_MS): Promise<Branches | null> {
  const answer = await git(tmpdir(), ['ls-remote', '--symref', '--end-of-options', remote, 'HEAD', 'refs/heads/*'], { stallMs }).catch(() => null);
  if (!answer) return null;
  const lines = answer.stdout.split('\n').map((line) => line.split('\t'));
  const branches = lines.filter(([what, ref]) => ref?.startsWith('refs/heads/') && !what?.startsWith('ref: ')).map(([, ref]) => ref!.slice('refs/heads/'.length));
  const symref = lines.find(([what, ref]) => ref === 'HEAD' && what?.startsWith('ref: refs/heads/'));
  return { where: remote, branches, head: symref ? symref[0]!.slice('ref: refs/heads/'.length) : null };
}

const listed = (branches: string[]) => branches.slice(0, 10).join(', ') + (branches.length > 10 ? ', …' : '');

/**
 * The base branch among a repository's branches: `asked` when it has that branch; with none asked, `main`, or
 * else the branch its HEAD names (its work is on `master`). Throws BAD_INPUT saying what to do otherwise: an
 * empty repository, a branch it does not have, no `main` and no HEAD branch.
 */
export function baseBranchFor({ where, branches, head }: Branches, asked: string | undefined): string {
  if (!branches.length) {
    throw new MaestroError('BAD_INPUT', `${where} has no commit yet: tasks start from its base branch and merge back into it. Make a first commit there (git commit --allow-empty -m "First commit"), then register it.`);
  }
  if (asked !== undefined) {
    if (branches.includes(asked)) return asked;
    throw new MaestroError('BAD_INPUT', `baseBranch "${asked}" is not a branch of ${where} (its branches: ${listed(branches)}); nothing was saved.`);
  }
  if (branches.includes(DEFAULT_BASE_BRANCH)) return DEFAULT_BASE_BRANCH;
  if (head && branches.includes(head)) return head;
  throw new MaestroError('BAD_INPUT', `${where} has no branch ${DEFAULT_BASE_BRANCH} and no branch checked out: name the one tasks start from and merge into (config.baseBranch; its branches: ${listed(branches)}).`);
}
