/**
 * The task status machine (ARCHITECTURE §3, seed 002 §3.2, §5.3).
 *
 *   ready → queued → planning → plan_review → [spec_review →] executing
 *   executing ⇄ awaiting_input (a clarifying question; a reply resumes)
 *   executing → reviewing → exec_review → merging → done
 *
 * A decomposed parent leaves plan review for waiting_children and is done when
 * its children are. A reviewer's reject sends the task back to executing with
 * the findings; a person's reject at a gate supersedes this version with a new
 * one (version + 1). Anything in flight may be requeued to ready (a worker that
 * died, a released claim) or parked in needs_attention with a reason; a person
 * may cancel anything that is not finished, and cancelling a task cancels its
 * unfinished subtasks with it. needs_attention and cancelled go back to ready
 * on retry; work parked while merging goes back to merging, and a decomposed
 * parent back to waiting_children (its cancelled subtasks back to ready). A
 * retry from the current main (--fresh) supersedes a task that needs attention
 * with its next version, in ready.
 *
 * Every transition goes through `assertTransition`; an illegal one throws
 * ILLEGAL_TRANSITION, never a silent no-op. Every transition to ready clears
 * the claim (claimedAt, claimedBy, the lease), or a retried task could never
 * be claimed again (`claimed_at IS NULL` is part of the compare-and-set).
 */
import { MaestroError } from './errors.js';

export const TASK_STATUSES = [
  'ready',
  'queued',
  'planning',
  'plan_review',
  'spec_review',
  'waiting_children',
  'executing',
  'awaiting_input',
  'reviewing',
  'exec_review',
  'merging',
  'done',
  'needs_attention',
  'cancelled',
  'superseded',
] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

/** The one table of legal transitions. */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  ready: ['queued', 'needs_attention', 'cancelled'],
  queued: ['planning', 'executing', 'ready', 'needs_attention', 'cancelled'],
  planning: ['plan_review', 'spec_review', 'executing', 'waiting_children', 'awaiting_input', 'ready', 'needs_attention', 'cancelled'],
  plan_review: ['spec_review', 'executing', 'waiting_children', 'superseded', 'ready', 'needs_attention', 'cancelled'],
  spec_review: ['executing', 'waiting_children', 'superseded', 'ready', 'needs_attention', 'cancelled'],
  waiting_children: ['done', 'needs_attention', 'cancelled'],
  executing: ['awaiting_input', 'reviewing', 'exec_review', 'ready', 'needs_attention', 'cancelled'],
  awaiting_input: ['planning', 'executing', 'ready', 'needs_attention', 'cancelled'],
  reviewing: ['exec_review', 'executing', 'merging', 'ready', 'needs_attention', 'cancelled'],
  exec_review: ['merging', 'executing', 'superseded', 'ready', 'needs_attention', 'cancelled'],
  // → exec_review: a conflict run resolved the merge, and the resolution waits for a person (daemon/outcomes.ts).
  merging: ['done', 'exec_review', 'executing', 'ready', 'needs_attention', 'cancelled'],
  done: [],
  // → merging: a retry of work parked while merging (its approval stands; see tasks.retry). → waiting_children: a
  // retry of a decomposed parent, whose cancelled subtasks go back to ready with it (store/ops/taskTree.ts).
  // → superseded: a retry from the current main makes the next version (store/ops/conflictRetry.ts freshVersion).
  needs_attention: ['ready', 'merging', 'waiting_children', 'superseded', 'cancelled'],
  cancelled: ['ready', 'waiting_children'],
  superseded: [],
};

export const TERMINAL_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter((s) => TRANSITIONS[s].length === 0);

/** Statuses of work that is over (a cancelled task comes back only by a person's retry): no ranking, no worktree. */
export const FINISHED_STATUSES: readonly TaskStatus[] = ['done', 'cancelled', 'superseded'];

/** Statuses in which a run may be in flight: the task is read-only to people. */
export const IN_FLIGHT_STATUSES: readonly TaskStatus[] = ['queued', 'planning', 'executing', 'awaiting_input', 'reviewing', 'merging'];

/**
 * Statuses in which a person may edit a task's fields (PATCH /api/tasks/:id, `maestro task edit`, the board's Edit):
 * neither while a run is in flight nor once it is final. The one rule the store enforces and the board offers Edit
 * by; some fields have rules of their own in some of these (the plan, a dependency added to started work:
 * store/ops/editTask.ts), which the daemon says when it refuses.
 */
export const EDITABLE_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter((s) => !IN_FLIGHT_STATUSES.includes(s) && !TERMINAL_STATUSES.includes(s));

/** Statuses whose task its last error still explains (parked, or waiting for or running its retry); past a gate or done it is history. */
export const LAST_ERROR_STATUSES: readonly TaskStatus[] = ['needs_attention', 'ready', 'queued', 'planning', 'executing', 'cancelled'];

/** Statuses a human gate holds a task in. */
export const GATE_STATUSES: readonly TaskStatus[] = ['plan_review', 'spec_review', 'exec_review'];

/** In-flight statuses from which an expired lease may send the task back to ready. */
export const REQUEUEABLE_STATUSES: readonly TaskStatus[] = IN_FLIGHT_STATUSES.filter((s) => TRANSITIONS[s].includes('ready'));

/**
 * Statuses an expired claim is taken over in rather than sent back to ready: the stage before is finished and its
 * work published (an execute's commit is pushed to the shared remote before the task moves to reviewing:
 * daemon/runAftermath.ts publishTaskBranch). Back in ready the execute ran again from scratch: a second model bill, and
 * the first run's work thrown away (a team trial: SIGTERM of a daemon mid-execute). The taker's review run checks
 * the commit is there (daemon/runStarter.ts) and sends the task to ready, saying why, when it is not.
 */
export const TAKEN_OVER_AT_STAGE: readonly TaskStatus[] = ['reviewing'];

export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value);
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(from: TaskStatus, to: TaskStatus, taskId?: string): void {
  if (canTransition(from, to)) return;
  const where = taskId ? ` for task ${taskId}` : '';
  const legal = TRANSITIONS[from];
  const hint = legal.length ? `legal from ${from}: ${legal.join(', ')}` : `${from} is final`;
  throw new MaestroError('ILLEGAL_TRANSITION', `Cannot move${where} from ${from} to ${to} (${hint}).`, {
    details: { taskId, from, to, legal },
  });
}

export interface ClaimFields {
  claimedAt: number | null;
  claimedBy: string | null;
  leaseExpiresAt: number | null;
}

/**
 * The patch a transition applies besides the status itself. Moving to ready
 * always clears the claim.
 */
export function transitionPatch(from: TaskStatus, to: TaskStatus, taskId?: string): { status: TaskStatus } & Partial<ClaimFields> {
  assertTransition(from, to, taskId);
  if (to === 'ready') return { status: to, claimedAt: null, claimedBy: null, leaseExpiresAt: null };
  return { status: to };
}

/**
 * A human gate's next status after approval. An approved plan goes back to
 * ready so that a scheduler claims it for execution like any other work (a
 * decomposed parent waits for its children instead); approved work merges.
 */
export function statusAfterApproval(gate: 'plan_review' | 'spec_review' | 'exec_review', hasChildren: boolean): TaskStatus {
  switch (gate) {
    case 'plan_review':
    case 'spec_review':
      return hasChildren ? 'waiting_children' : 'ready';
    case 'exec_review':
      return 'merging';
    default: {
      const never: never = gate;
      throw new Error(`unknown gate ${String(never)}`);
    }
  }
}
