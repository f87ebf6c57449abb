/**
 * The cars of a merge train (mergeTrain.ts): each approved task's branch and the commit it is at, read for the whole
 * train at once, and what becomes of a task that cannot ride — already recorded, no branch, a branch moved after its
 * review, or a branch the train did not find (fetched again, published from this clone, or the person's).
 */
import { shellWord } from '../core/diffGateWays.js';
import { approvedCommit, mergeChecked, reviewedCommit } from '../core/reviewed.js';
import type { Project, Task } from '../core/types.js';
import { git } from '../git/git.js';
import { isAncestor, tipsOf } from '../git/merge.js';
import type { Store } from '../store/store.js';
import { branchOf, goneAdvice, movedSinceReview, reviewedInMain, thenRetry, type Car } from './mergeTrain.js';
import { baseBranchOf, remoteOf, type ProjectRepos } from './repos.js';

/** What the coordinator lends: its store and clones, and how it records a merge, parks a task or retries a push. */
export interface CarDeps {
  store: Store;
  repos: ProjectRepos;
  markMerged(task: Task, project: Project, branch: string, sha: string | null, how: string): Promise<void>;
  toAttention(task: Task, reason: string): Promise<void>;
  refusedPush(tasks: Task[], err: unknown): Promise<void>;
}

/**
 * Each task's branch and commit, and main's, read for the whole train from git's files (tipsOf; one for-each-ref
 * when they cannot say). On a shared remote the sync just fetched every task branch (remoteFetch.ts fetchForSync). A task already recorded is
 * finished here; one without a branch needs attention. A branch the remote lacks (its push after the run was refused) is published from this clone.
 */
export async function carsFor(deps: CarDeps, project: Project, repo: string, remote: string | null, tasks: Task[]): Promise<{ cars: Car[]; baseTip: string | undefined }> {
  const prefix = remote ? `refs/remotes/${remote}/` : 'refs/heads/';
  const names = [baseBranchOf(project), ...tasks.flatMap((t) => branchOf(t) ?? [])];
  const tips = await tipsOf(repo, names.map((n) => prefix + n));
  const recorded = new Set((await deps.store.db.all<{ task_id: string }>(`SELECT task_id FROM merges WHERE task_id IN (${tasks.map((_, i) => `$${i + 1}`).join(', ')})`, tasks.map((t) => t.id))).map((r) => r.task_id));
  const cars: Car[] = [];
  for (const task of tasks) {
    const branch = branchOf(task);
    if (recorded.has(task.id)) await deps.markMerged(task, project, branch ?? '', null, 'already recorded');
    else if (!branch) await deps.toAttention(task, 'nothing to merge: the task has no branch (its execute result is missing)');
    else {
      const tip = tips.get(prefix + branch);
      const here = tip ? await checkedHere(deps, task, project, repo, remote, branch, tip) : undefined;
      const car = !tip ? await missingBranch(deps, task, project, repo, remote, branch) : here !== undefined ? here : { task, branch, ref: prefix + branch, tip };
      const moved = car && ((await aheadOnRemote(project, repo, remote, car)) ?? movedSinceReview(car));
      if (moved) await deps.toAttention(task, moved);
      else if (car) cars.push(car);
    }
  }
  // Main as checked out: the remote's as just synced, or the project's own (checked to be on it before merging).
  return { cars, baseTip: tips.get(prefix + baseBranchOf(project)) };
}

/**
 * A passed merge check whose push failed (a remote that refused it a moment): the remote's branch is still the
 * approved commit, behind the checked merge this clone's branch holds. That branch is pushed now (a fast-forward
 * only) and the checked commit rides; a push refused again is retried later, as any. When this clone does not hold
 * it (another daemon checked it), the merge is checked again (checkAgain). Undefined when the remote has the checked
 * commit, or its branch is neither that nor the approved commit: the car is the remote's, as it is.
 */
async function checkedHere(deps: CarDeps, task: Task, project: Project, repo: string, remote: string | null, branch: string, tip: string): Promise<Car | null | undefined> {
  const checked = mergeChecked(task);
  if (!remote || !checked || tip === checked.commitSha) return undefined;
  const ref = `refs/heads/${branch}`;
  if ((await tipsOf(repo, [ref])).get(ref) !== checked.commitSha || !(await isAncestor(repo, tip, checked.commitSha))) {
    return tip === checked.approved ? await checkAgain(deps, task, remote, branch, tip, checked.commitSha) : undefined;
  }
  try {
    await deps.repos.pushBranchNow(project, repo, branch);
  } catch (err) {
    await deps.refusedPush([task], err);
    return null;
  }
  return { task, branch, ref, tip: checked.commitSha };
}

/**
 * The remote's branch is still the approved commit, and this clone does not hold the checked merge (another daemon's
 * merge check whose push failed): that commit cannot land from here, and the branch did not move after its review.
 * The check is forgotten, so this train checks the approved commit's merge with main again; nothing lands unchecked.
 * Null (the car waits for the next train) when the task moved on or was checked again meanwhile.
 */
async function checkAgain(deps: CarDeps, task: Task, remote: string, branch: string, tip: string, lost: string): Promise<Car | null> {
  const reason = `the merge check's commit ${lost.slice(0, 12)} is not on the remote ${remote} nor in this clone (its push failed): the merge is checked again`;
  const fresh = await deps.store.tasks.forgetMergeCheck(task.id, lost, reason);
  return fresh ? { task: fresh, branch, ref: `refs/remotes/${remote}/${branch}`, tip } : null;
}

/** The branch is not where the train looked: fetched again (pushed since), published from this clone, or a task that needs attention. */
async function missingBranch(deps: CarDeps, task: Task, project: Project, repo: string, remote: string | null, branch: string): Promise<Car | null> {
  let ref = `refs/heads/${branch}`;
  if (remote) {
    if (await deps.repos.fetchRemoteBranch(repo, remote, branch)) ref = `refs/remotes/${remote}/${branch}`;
    else if (await reviewedInMain(repo, task, `refs/remotes/${remote}/${baseBranchOf(project)}`)) {
      // A train's push took main and the branch together, then its daemon died before recording the merge.
      await deps.markMerged(task, project, branch, reviewedCommit(task), 'already in main');
      return null;
    } else {
      let pushed: boolean;
      try {
        pushed = await deps.repos.pushBranchNow(project, repo, branch);
      } catch (err) {
        await deps.refusedPush([task], err);
        return null;
      }
      if (!pushed) {
        await deps.toAttention(task, `branch ${branch} is not on the remote ${remoteOf(project)}`);
        return null;
      }
    }
  }
  const tip = (await tipsOf(repo, [ref])).get(ref);
  if (!tip) {
    const reviewed = reviewedCommit(task);
    // Said with the way back (not only that it is missing): a reviewed commit is still in the repository.
    await deps.toAttention(task, reviewed && !remote ? thenRetry(goneAdvice(repo, branch, reviewed, ', so nothing was merged'), task) : `branch ${branch} does not exist in ${repo}`);
    return null;
  }
  return { task, branch, ref, tip };
}

/** At most this many of the commits a review never saw are named (their count is said whole). */
const NAMED_COMMITS = 5;

/**
 * The remote's task branch is the approved commit with commits on top (another host's clone, a person, a late push
 * committed there): not a branch that moved away from its review, but one that holds commits the review never saw.
 * Said with those commits and the ways out: put the remote's branch back on the reviewed commit (from this clone,
 * which has it; refused if the branch moved again), run the task again, or cancel it. Null for anything else.
 */
async function aheadOnRemote(project: Project, repo: string, remote: string | null, car: Car): Promise<string | null> {
  if (!remote || !car.ref.startsWith('refs/remotes/')) return null;
  return aheadOfReview(project, repo, remote, car.task, car.branch, car.tip, 'merge');
}

/**
 * What `tip`, the task's branch on the shared remote (`remote`, as `repo`, this daemon's clone, fetched it), holds on
 * top of the approved commit, as the merge says it when it parks the task (`merge`) and as the gate says it before
 * the approval (`gate`, the task detail's mergeBlocked): the same commits and way back, but that an approval would
 * merge nothing yet, the way back ends in the approval, and the other way is a rejection (a retry is for a parked
 * task). Null when the branch holds no such commits.
 */
export async function aheadOfReview(project: Project, repo: string, remote: string, task: Task, branch: string, tip: string, when: 'merge' | 'gate'): Promise<string | null> {
  const reviewed = reviewedCommit(task);
  const approved = approvedCommit(task);
  if (!reviewed || !approved || tip === reviewed || !(await isAncestor(repo, approved, tip))) return null;
  // The commits the tip holds that the reviewed commit (the approved one, or the merge a check passed on) does not.
  const log = await git(repo, ['log', '--format=%H %s', `${reviewed}..${tip}`]);
  const lines = log.stdout.split('\n').filter(Boolean);
  const named = lines.slice(0, NAMED_COMMITS).map((l) => `${l.slice(0, 12)}${l.slice(40)}`);
  const more = lines.length > named.length ? `, and ${lines.length - named.length} more` : '';
  const id = task.id;
  const where = `${branch} on the remote ${remoteOf(project) ?? remote}`;
  const putBack = `git -C ${shellWord(repo)} push --force-with-lease=refs/heads/${branch}:${tip} ${remote} ${reviewed}:refs/heads/${branch}`;
  const merge = when === 'merge';
  const outcome = merge ? 'Nothing was merged' : 'An approval would merge nothing';
  const then = merge ? `run \`maestro task retry ${id}\` to merge it` : 'approve it';
  const again = merge ? `\`maestro task retry ${id} --fresh\` runs the task again from the current ${baseBranchOf(project)}` : `\`maestro task reject ${id} --reason "…"\` sends it back as a new version`;
  return (
    `${where} holds ${lines.length} commit${lines.length === 1 ? '' : 's'} its review never saw, on top of the ${merge ? 'approved' : 'reviewed'} commit ${approved.slice(0, 12)}: ${named.join('; ')}${more}. ` +
    `${outcome}: they would land unreviewed. To merge what was reviewed, put the remote's branch back on it: ${putBack}, then ${then}; ${again}; or \`maestro task cancel ${id}\``
  );
}
