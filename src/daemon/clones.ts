/**
 * A daemon's clones of a shared remote (repos.ts): how they are first made (beside their place and moved there
 * whole, so a clone cut short by a kill is never taken for one), and how a task branch in one is read and moved.
 */
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { git } from '../git/git.js';
import { tipsOf } from '../git/merge.js';
import { listWorktrees, setAsideLeftovers } from '../git/worktree.js';

/** Makes `clone` with `make`, which writes it at the path it is given. */
export async function madeWhole(clone: string, make: (partial: string) => Promise<unknown>): Promise<void> {
  const partial = `${clone}.partial`;
  mkdirSync(dirname(clone), { recursive: true });
  rmSync(partial, { recursive: true, force: true });
  await make(partial);
  rmSync(clone, { recursive: true, force: true }); // a folder without .git: nothing of git's
  renameSync(partial, clone);
}

/**
 * A clone of the local repository `from` at `to`, whose objects are hard links (a big repository is neither
 * downloaded nor copied again), then pointed at `remote`: `from`'s own branches, which the clone took for its
 * remote's, go with the old remote, and the next fetch brings what `remote` has.
 */
export async function localCloneOf(from: string, remote: string, to: string): Promise<void> {
  await git(dirname(to), ['clone', '-q', '--local', '--no-checkout', '--end-of-options', from, to]);
  await git(to, ['remote', 'remove', 'origin']);
  await git(to, ['remote', 'add', 'origin', remote]);
}

/** The task branch in this clone, and where the clone last saw it on the remote (its `origin/<branch>`): from git's files, else one git process. */
export async function branchTips(clone: string, branch: string): Promise<{ local?: string; published?: string }> {
  const tips = await tipsOf(clone, [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]);
  return { local: tips.get(`refs/heads/${branch}`), published: tips.get(`refs/remotes/origin/${branch}`) };
}

/**
 * Moves `branch` from `from` to `to`: forward, or (`discard`) off commits that are not `to`'s. In the worktree
 * that has it checked out (its files and index follow), else the ref alone. Forward, a worktree whose
 * uncommitted files are in the way keeps the branch where it is; the run goes on there, and the merge refuses a
 * branch moved after its review. Off a discarded run's commits, its uncommitted files are set aside first
 * (setAsideLeftovers: nothing is deleted), so the branch always moves: left there, the next run would work
 * without the work that counted, and its push would take that work off the remote.
 */
export async function moveBranch(clone: string, branch: string, from: string, to: string, o: { discard?: boolean } = {}): Promise<void> {
  const worktree = (await listWorktrees(clone)).find((w) => w.branch === branch);
  if (!worktree) await git(clone, ['update-ref', `refs/heads/${branch}`, to, from]);
  else if (!o.discard) await git(worktree.path, ['merge', '--ff-only', '-q', to], { okCodes: [1, 128] });
  else {
    await setAsideLeftovers(worktree.path, `left by a run whose result was discarded, before ${branch} gave way to the remote's`);
    await git(worktree.path, ['reset', '-q', '--hard', to]);
  }
}
