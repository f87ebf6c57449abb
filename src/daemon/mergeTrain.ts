/**
 * A merge train: the approved branches of one project merged into main one
 * after another in one checkout, so that a shared remote gets one push for
 * all of them. Each car is merged onto what the cars before it left; one that
 * conflicts (main is left as it was before it) or that the before:merge hook
 * refuses drops out, and the cars behind it go on; so does one that must have the project's checks run on its
 * merge with main first (mergeQueue.ts: main moved since its branch), which lands once they passed, with the cars
 * behind it checked together with it (mergeBatch.ts). Nothing here writes to the
 * database: the MergeCoordinator records each merge once the push succeeded.
 *
 * Why: with three daemons on one remote, merges queued behind one merge lease
 * and each paid a fetch, a dozen git processes and a push alone (bench:multihost
 * on a 2-core machine at load 8–16: about 2.2 s per merge under the lease, 12.8 s
 * per task in `merging` against 0.9 s with one daemon). A train pays the fetch and
 * the push once, and each car one or two git processes (the merge; reading the new HEAD unless it fast-forwarded):
 * 1.7 s per task in `merging` with three daemons, 0.7 s with one (load 14–21).
 */
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { shellWord } from '../core/diffGateWays.js';
import { checkStart, reviewedCommit } from '../core/reviewed.js';
import { RUNS_ELSEWHERE } from '../core/runsElsewhere.js';
import { STEERING } from '../core/steering.js';
import type { Task } from '../core/types.js';
import { git } from '../git/git.js';
import { ignoredInTheWay, ignoredInTheWayError, type IgnoredInTheWay } from '../git/ignoredInTheWay.js';
import { watchedThroughLinks } from '../git/linkAliases.js';
import { mergeBranch, mergeCommitOf } from '../git/merge.js';
import { readRef } from '../git/onDisk.js';
import { filesRunningElsewhere } from '../git/runsElsewhere.js';
import { changedSteering } from '../git/steering.js';
import { chainFor, ridersFor, type Rider } from './mergeBatch.js';

/** The task to merge, its branch, the full ref its commit is read from and that commit. */
export interface Car {
  task: Task;
  branch: string;
  ref: string;
  tip: string;
}

export type CarOutcome =
  | { kind: 'merged'; car: Car; sha: string; previousSha: string; fastForward: boolean; settingsFiles: string[]; runsElsewhere: string[] }
  | { kind: 'conflict'; car: Car; message: string; files: string[] }
  | { kind: 'attention'; car: Car; reason: string }
  /**
   * The base moved since the car's branch and the project has checks: they run on the merged tree first (a merge check
   * run), with the `riders` behind it merged in too (mergeBatch.ts).
   */
  | { kind: 'check'; car: Car; head: string; riders: Rider[] }
  /** The checkout's index is locked (REPO_LOCKED): the caller waits for a momentary lock, or parks the car. */
  | { kind: 'locked'; car: Car; error: MaestroError };

export interface TrainOptions {
  repo: string;
  base: string;
  strategy: 'ff-only' | 'merge' | 'no-ff';
  /** The checked-out base's commit when the caller knows it (read with the cars' tips); else read here. */
  head?: string;
  cars: Car[];
  /** The before:merge hook: a reason to refuse the car, or null. */
  veto: (car: Car) => Promise<string | null>;
  /** A person's checkout (not a daemon's clone): a car that would write over its git-ignored files is stopped (ignoredInTheWay.ts). */
  personsCheckout?: boolean;
  /**
   * Whether the project's checks must run on the merge of the car onto `head` before it may land (the merge queue:
   * mergeQueue.ts): the car then waits for its merge check run, and main is left as it is for it.
   */
  mustCheck?: (car: Car, head: string) => Promise<boolean>;
}

/**
 * Merges the cars in order into the checked-out base (checked clean beforehand). In a person's checkout, a car
 * whose branch puts a path where git-ignored files lie needs attention before anything is merged (git would
 * overwrite or delete them): looked for once for the whole train (ignoredInTheWay.ts). A git failure that is
 * neither a conflict, a refused fast-forward nor files in the car's way (a lock file taken meanwhile, a
 * broken object) ends the train at that car, which needs attention; the cars behind it are not tried and
 * stay approved for the next train (which finds a lock left there before merging, and says so).
 */
export async function runTrain(opts: TrainOptions): Promise<CarOutcome[]> {
  const outcomes: CarOutcome[] = [];
  let head = opts.head ?? (await git(opts.repo, ['rev-parse', '--verify', 'HEAD'])).stdout.trim();
  // Looked for once, from main as the train finds it: a path a car before this one adds is tracked once it merged.
  const ignored = opts.personsCheckout ? await ignoredInTheWay(opts.repo, head, opts.cars.map((c) => c.tip)) : new Map<string, IgnoredInTheWay[]>();
  // Riders of a checked chain, landed with their leader.
  const landedWith = new Set<string>();
  for (const [i, car] of opts.cars.entries()) {
    if (landedWith.has(car.task.id)) continue;
    const inTheWay = ignored.get(car.tip);
    if (inTheWay) {
      outcomes.push({ kind: 'attention', car, reason: thenRetry(ignoredInTheWayError({ repoPath: opts.repo, branch: car.branch, unchanged: opts.base }, inTheWay).message, car.task) });
      continue;
    }
    const behind = opts.cars.slice(i + 1).filter((c) => !ignored.has(c.tip) && !landedWith.has(c.task.id));
    // A leader's branch holds the chain its check passed on, riders and all: it lands whole, or is checked again.
    const chain = chainFor(car, behind, head);
    if (chain === 'stale' || (await opts.mustCheck?.(car, head))) {
      // One check at a time (mergeQueue.ts), of the cars behind it too: they stay approved for the train after it.
      outcomes.push({ kind: 'check', car, head, riders: ridersFor(car, behind) });
      break;
    }
    const refused: Array<Extract<CarOutcome, { kind: 'attention' }>> = [];
    for (const c of chain ?? [{ car }]) {
      const why = await opts.veto(c.car);
      if (why !== null) refused.push({ kind: 'attention', car: c.car, reason: `before:merge hook cancelled: ${why}` });
    }
    if (refused.length) {
      // A chain lands whole or not at all: what is left of it is checked again without the refused cars.
      outcomes.push(...refused);
      if (chain && refused[0]!.car !== car) {
        outcomes.push({ kind: 'check', car, head, riders: ridersFor(car, behind.filter((c) => !refused.some((r) => r.car === c))) });
        break;
      }
      continue;
    }
    try {
      if (chain) {
        // The chain the check passed on, on the main it was built on: main fast-forwards to its tip, each car's merge commit its own.
        await mergeBranch({ repoPath: opts.repo, branch: car.branch, baseBranch: opts.base, strategy: 'ff-only', head, tip: car.tip });
        for (const [k, c] of chain.entries()) {
          outcomes.push({ kind: 'merged', car: c.car, sha: c.sha, previousSha: k ? chain[k - 1]!.sha : head, fastForward: false, settingsFiles: [], runsElsewhere: [] });
          landedWith.add(c.car.task.id);
        }
        head = car.tip;
        continue;
      }
      const out = await mergeBranch({ repoPath: opts.repo, branch: car.branch, baseBranch: opts.base, strategy: opts.strategy, message: `Merge ${car.branch}`, head, tip: car.tip });
      outcomes.push({ kind: 'merged', car, sha: out.sha, previousSha: out.previousSha, fastForward: out.fastForward, settingsFiles: [], runsElsewhere: [] });
      head = out.sha;
    } catch (err) {
      if (!(err instanceof MaestroError)) throw err;
      if (err.code === 'MERGE_CONFLICT' || err.code === 'NOT_FAST_FORWARD') {
        const files = err.details?.conflictedFiles;
        outcomes.push({ kind: 'conflict', car, message: err.message, files: Array.isArray(files) ? files.filter((f): f is string => typeof f === 'string') : [] });
        continue;
      }
      // Files in the checkout in this car's way (git refused to start; main is as it was): the person's to
      // clear. The cars behind it may not touch them, so they go on.
      if (err.code === 'DIRTY_MAIN') {
        outcomes.push({ kind: 'attention', car, reason: thenRetry(err.message, car.task) });
        continue;
      }
      // A lock file (REPO_LOCKED) is in every car's way: the train ends here, and the caller decides whether to wait.
      outcomes.push(err.code === 'REPO_LOCKED' ? { kind: 'locked', car, error: err } : { kind: 'attention', car, reason: err.message });
      break;
    }
  }
  await readWatchedFiles(opts.repo, outcomes);
  return outcomes;
}

/**
 * Why a car may not go: its branch no longer points at the commit that was reviewed. The worktrees of a repository
 * share its branches, and agents run commands as the user: another task's agent, a process an agent left running
 * or a `git branch -f` can commit on or rewind a task's branch after its review. Merging the tip would land
 * commits nobody reviewed; a tip moved back into main would be recorded as merged ("already in main"), the
 * branch deleted and the reviewed work never merged.
 */
export function movedSinceReview(car: Car): string | null {
  const reviewed = reviewedCommit(car.task);
  if (!reviewed || reviewed === car.tip) return null;
  return thenRetry(`${movedMessage(car.branch, reviewed, car.tip)}, so nothing was merged; look at its commits, put it back on ${reviewed}`, car.task);
}

/** The branch the task's result names (its execute run's), or null when it names none. */
export const branchOf = (task: Task): string | null => (typeof task.result?.branch === 'string' ? task.result.branch : null);

/** Whether a clone's copy of the task's branch (as its last fetch left it) is the commit its reviewers approved. */
export function fetchedAsReviewed(clone: string, task: Task): boolean {
  const branch = branchOf(task);
  const reviewed = reviewedCommit(task);
  return branch !== null && reviewed !== null && readRef(join(clone, '.git'), `refs/remotes/origin/${branch}`) === reviewed;
}

/** What a branch moved since its review means (said before the approval too: the task detail's mergeBlocked). */
export function movedMessage(branch: string, reviewed: string, tip: string): string {
  return `${branch} moved after its review (reviewed ${reviewed.slice(0, 12)}, now ${tip.slice(0, 12)}): merging it would land commits nobody reviewed, or leave the reviewed work out`;
}

/**
 * A task's branch deleted after its review (a `git branch -D`, a clean-up script): what to do, as the gate says it
 * (the task detail's mergeBlocked) and the merge. The reviewed commit is still in the repository (git keeps it until
 * it prunes, weeks on), and a branch put back on it merges as any other.
 */
export function goneAdvice(repo: string, branch: string, reviewed: string, merge = ''): string {
  return `${branch} is gone from ${repo} (deleted after its review)${merge}; put it back on the reviewed commit: git -C ${shellWord(repo)} branch ${shellWord(branch)} ${reviewed}`;
}

/** The same, with what to do, as the gate says it: the task detail's mergeBlocked and the diff's branchMoved. */
export function movedAdvice(branch: string, reviewed: string, tip: string): string {
  return `${movedMessage(branch, reviewed, tip)}; look at its commits and put it back on ${reviewed}`;
}

/** A merge parked for the person: what they must do (the message says), then how it is tried again (it goes back to merging). */
export function thenRetry(message: string, task: Task): string {
  return `${message}, then run \`maestro task retry ${task.id}\` to merge it`;
}

/**
 * Work that changes a steering file changes what runs next, so the merge names those files
 * (`project.settings_files`); work that changes what runs outside Maestro (CI, git hooks, package scripts) is named
 * too (`project.runs_elsewhere`): the gate said both before the approval, but a project that approves by itself
 * has no person at its gate, and the merge is then the one place they are said. As the gate reads them: through the
 * links of the merged tree too (read once for the train), each name as the person reads it. One diff over the whole
 * train first; each car's own only when the train touched either list (a package.json is read per car then).
 */
async function readWatchedFiles(repo: string, outcomes: CarOutcome[]): Promise<void> {
  const merged = outcomes.flatMap((o) => (o.kind === 'merged' ? [o] : []));
  if (!merged.length) return;
  const [from, to] = [merged[0]!.previousSha, merged[merged.length - 1]!.sha];
  const via = await watchedThroughLinks(repo, to, { steering: STEERING, elsewhere: RUNS_ELSEWHERE });
  // Whether the train touched either list at all: one diff over both (most trains touch neither).
  const touched = await git(repo, ['diff', '--name-only', '-z', '--no-renames', from, to, '--', ...via.steering.pathspecs, ...via.elsewhere.pathspecs], { encoding: 'latin1' });
  if (!touched.stdout.split('\0').some(Boolean)) return;
  for (const m of merged) {
    m.settingsFiles = await changedSteering(repo, m.previousSha, m.sha, via.steering);
    m.runsElsewhere = await filesRunningElsewhere(repo, m.previousSha, m.sha, via.elsewhere);
  }
}

/**
 * The commit that landed a car found in `main` already (a crash between the train's push and its record, or another
 * daemon's train): the merge commit of its own change, as the train records it. Not its branch tip: a batch leader's
 * branch holds the whole chain (mergeBatch.ts), its tip the last rider's merge, and a rider's tip is its approved
 * commit. The tip itself when nothing merged its change (a fast-forward, or a checked merge main fast-forwarded to).
 */
export async function landedAs(repo: string, main: string, car: Car): Promise<string> {
  return (await mergeCommitOf(repo, main, checkStart(car.task) ?? car.tip)) ?? car.tip;
}

/** Whether `main` holds the commit the task's reviewers approved (false when there is none, or this clone lacks it). */
export async function reviewedInMain(repo: string, task: Task, main: string): Promise<boolean> {
  const reviewed = reviewedCommit(task);
  return reviewed !== null && (await git(repo, ['merge-base', '--is-ancestor', reviewed, main], { okCodes: [1, 128] })).code === 0;
}
