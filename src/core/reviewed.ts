/**
 * The commit a task's reviewers approved, and what an approval is tied to. Worktrees share a repository's
 * branches and agents run commands as the user, so a task's branch can move after its review; the commit
 * the review names is what the person is shown at exec_review (GET /api/tasks/:id/diff's `head`), what an
 * approval naming a `commit` must match, and what the merge train takes (daemon/mergeTrain.ts).
 */
import { MaestroError } from './errors.js';
import type { TaskStatus } from './status.js';
import type { Task } from './types.js';

/**
 * The commit the task's reviewers approved: the review's, or the conflict run's once one resolved a conflict at
 * merge time (it is reviewed too); once a merge check passed on it, the merged commit it checked (what lands, and
 * what the branch holds); null for a result that names none.
 */
export function reviewedCommit(task: Task): string | null {
  return mergeChecked(task)?.commitSha ?? approvedCommit(task);
}

/**
 * The commit the approval is tied to: the review's, or a conflict run's (or a person's) resolution; a merge check
 * does not change it.
 */
export function approvedCommit(task: Task): string | null {
  const result = task.result ?? {};
  const conflict = result.conflict as { commitSha?: unknown } | undefined;
  const sha = conflict?.commitSha ?? result.commitSha;
  return typeof sha === 'string' ? sha : null;
}

/** What a merge check that passed left on the task (result.mergeChecked): the commit it checked, and how many rounds. */
export interface MergeChecked {
  /** The approved commit the base was merged onto (approvedCommit when it was checked). */
  approved: string;
  /** The merged commit the checks passed on: what may land. */
  commitSha: string;
  /** Merge checks that passed for this approval (the base moved again after each but the last): nextCheck counts them. */
  rounds: number;
  /** The base commit the checked merge was made with (result.mergeChecked.baseSha); null when not recorded. */
  base: string | null;
  /** Checks that passed on that very base after the first (a batch checked again: nextCheck counts them). */
  rechecks: number;
  /** A check of several changes together (daemon/mergeBatch.ts): the chain it passed on; absent for a check of this change alone. */
  batch?: CheckedBatch;
}

/**
 * The chain a merge check of several changes passed on (daemon/mergeBatch.ts): from the base, each car's commit
 * merged in turn, a merge commit each, the first the task whose check it was (its `commitSha` the chain's tip).
 */
export interface CheckedBatch {
  /** Where the check started the task's branch from: its reviewed commit before this check (the chain's first car). */
  from: string;
  /** The task's merge check before this one (what its branch held at `from`), put back when this one stops counting. */
  before: unknown;
  /** The base commit the chain was built on: it lands only on that main. */
  base: string;
  /** In chain order, the task first: each task, the commit merged for it and its merge commit in the chain. */
  cars: Array<{ taskId: string; commit: string; sha: string }>;
}

/**
 * The task's passed merge check (daemon/mergeQueue.ts), while it is one of the commit approved now: a conflict run's
 * or a person's resolution made since is another change, and the check of the older one no longer counts.
 */
export function mergeChecked(task: Task): MergeChecked | null {
  const m = task.result?.mergeChecked as Partial<MergeChecked> | undefined;
  if (!m || typeof m.commitSha !== 'string' || typeof m.approved !== 'string') return null;
  if (m.approved !== approvedCommit(task)) return null;
  const batch = isBatch(m.batch) ? { batch: m.batch } : {};
  const base = (m as { baseSha?: unknown }).baseSha;
  const rechecks = (m as { rechecks?: unknown }).rechecks;
  return { approved: m.approved, commitSha: m.commitSha, rounds: typeof m.rounds === 'number' ? m.rounds : 1, base: typeof base === 'string' ? base : null, rechecks: typeof rechecks === 'number' ? rechecks : 0, ...batch };
}

/**
 * Which merge check of the approval a check on `base` is (daemon/mergeQueue.ts MAX_CHECK_ROUNDS): its round, the
 * first or one more than the last that passed when the base moved since; on the very base that one passed on, the same
 * round. The base does not move when a batch is checked again because a rider was retried, cancelled or moved (daemon/
 * mergeBatch.ts): counted, three such re-checks asked a person why main "moved again" though it had not. `rechecks`:
 * how many checks passed on that very base before this one (0: base moved, or none passed yet), each a batch that did
 * not land because a change in it changed. Nothing else bounds them, so the merge queue asks a person after
 * MAX_SAME_BASE_CHECKS rather than check on, should a change keep changing.
 */
export function nextCheck(task: Task, base: string | null): { round: number; rechecks: number } {
  const checked = mergeChecked(task);
  if (!checked) return { round: 1, rechecks: 0 };
  const sameBase = checked.base !== null && checked.base === base;
  return sameBase ? { round: Math.max(1, checked.rounds), rechecks: checked.rechecks + 1 } : { round: checked.rounds + 1, rechecks: 0 };
}

function isBatch(b: unknown): b is CheckedBatch {
  const x = b as Partial<CheckedBatch> | undefined;
  return !!x && typeof x.from === 'string' && typeof x.base === 'string' && Array.isArray(x.cars) && x.cars.length > 1;
}

/**
 * The task's own change in a chain it passed a check of several changes in (its merge commit there), with the chain's
 * commit before it (null: it is the first car, built on the base): its branch holds the whole chain while it waits to
 * land, and the chain's tip is every car's change, not its. Null when its passed check was of it alone.
 */
export function ownCar(task: Task): { sha: string; after: string | null } | null {
  const cars = mergeChecked(task)?.batch?.cars;
  const i = cars?.findIndex((c) => c.taskId === task.id) ?? -1;
  return cars && i >= 0 ? { sha: cars[i]!.sha, after: i > 0 ? cars[i - 1]!.sha : null } : null;
}

/** The commit the task's next merge check starts its branch from: before a check of several changes, what its branch held. */
export function checkStart(task: Task): string | null {
  return mergeChecked(task)?.batch?.from ?? reviewedCommit(task);
}

/**
 * Whether a check of several changes together failed with this task in it (result.mergeAlone, the approved commit it
 * was then): it is checked alone from now on, so the change that breaks the checks is found by its own check.
 */
export function mergeAlone(task: Task): boolean {
  const alone = task.result?.mergeAlone;
  return typeof alone === 'string' && alone === approvedCommit(task);
}

/** Statuses in which a run may still move the task's branch: its change is the tip's, the work so far. */
const WORKING: ReadonlySet<TaskStatus> = new Set(['ready', 'queued', 'planning', 'executing', 'awaiting_input', 'reviewing']);

/**
 * The commit a version's change is shown at once its reviewers approved one: at exec_review and after (merging,
 * parked, cancelled, superseded by a person's rejection), whatever the branch points at now. Null while a run may
 * still move the branch, and for a result no review approved (a reviewer's rejection, an execute result): the
 * branch tip is then the change.
 */
export function reviewedHead(task: Task): string | null {
  if (WORKING.has(task.status)) return null;
  const result = task.result ?? {};
  return result.kind === 'review' && result.verdict === 'approve' ? reviewedCommit(task) : null;
}

/**
 * An approval that names the commit the person looked at, refused because the change waiting at the gate is
 * another commit now (a new review, a conflict run): nothing is approved, the person looks again.
 */
export function staleReview(task: Task, seen: string, reviewed: string): MaestroError {
  return new MaestroError(
    'STALE_REVIEW',
    `Nothing was approved: you looked at commit ${seen.slice(0, 12)} of task ${task.id}, but the change waiting at exec_review is commit ${reviewed.slice(0, 12)} now. Look at its diff again, then approve what it shows.`,
    { details: { taskId: task.id, commit: seen, reviewed } },
  );
}
