/**
 * At exec_review, how far the project's base branch moved since the task's branch was cut (or last took it in):
 * the commits on the base the branch lacks, counted with one `git rev-list` (git/divergence.ts commitsBehind), so a
 * person approving a merge knows whether it lands on the base they think. With the project's merge strategy, for
 * the board to say what the merge does then (mergeTrain.ts): `merge`/`no-ff` merge onto the moved base, the project's
 * checks run on the merged tree first when it has any (daemon/mergeQueue.ts; a conflict goes to a conflict run); `ff-only` cannot fast-forward, so a conflict run
 * brings the base in, runs the checks and reviews, and the result comes back to the gate. A branch or base that is
 * gone is said (`missing`), never an error; a repository git cannot read any more gives null (mergeBlocked says why).
 * On a shared remote the daemon's clone is read, as its last fetch left the remote's branches.
 */
import { isMaestroError } from '../../core/errors.js';
import type { Project, Task } from '../../core/types.js';
import { remoteOf, workRepoOf, baseBranchOf } from '../../daemon/repos.js';
import { loadProjectConfig } from '../../executor/projectConfig.js';
import { commitsBehind } from '../../git/divergence.js';
import type { BaseMoved } from '../wire/responses.js';
import { branchOf } from './reviewData.js';

export async function baseMoved(home: string | undefined, project: Project, task: Task): Promise<BaseMoved | null> {
  if (task.status !== 'exec_review') return null;
  const shared = remoteOf(project) !== null;
  if (shared && !home) return null;
  const repo = workRepoOf(home ?? '', project);
  const base = baseBranchOf(project);
  const branch = branchOf(task);
  const prefix = shared ? 'refs/remotes/origin/' : 'refs/heads/';
  try {
    const behind = await commitsBehind(repo, prefix + branch, prefix + base);
    if ('missing' in behind) return { state: 'missing', base, branch, missing: behind.missing };
    return { state: 'counted', base, branch, commits: behind.commits, ...mergeOf(repo) };
  } catch (err) {
    // The folder gone, git missing: mergeBlocked says so.
    if (isMaestroError(err, 'GIT_FAILED') || isMaestroError(err, 'NOT_A_REPOSITORY') || isMaestroError(err, 'GIT_MISSING')) return null;
    throw err;
  }
}

/** The strategy the merge will use and the checks it runs (main's .maestro/config.json, as the merge coordinator reads it); null and 0 when that file is broken. */
function mergeOf(repo: string): Pick<Extract<BaseMoved, { state: 'counted' }>, 'mergeStrategy' | 'checks'> {
  try {
    const config = loadProjectConfig(repo);
    return { mergeStrategy: config.mergeStrategy, checks: config.checks.length };
  } catch {
    return { mergeStrategy: null, checks: 0 };
  }
}
