/**
 * Auto-approval (the project setting `autoApproveAfterMs`): a task at a gate is approved after that long without a
 * person. It applies to the tasks that reach a gate once it took effect, never to the ones already waiting there:
 * those were waiting for a person, who may not know the setting changed (a trial switched it on for five seconds
 * and a task waiting at exec_review merged in that window). "Took effect" is the setting's `project.config` event,
 * kept with the project (projects.auto_approve_from, store/ops/autoApproval.ts); a task reached its gate after it
 * when its status event into the gate comes later in the log. Event ids, not clocks: several daemons on one
 * PostgreSQL stamp times each by its own clock, while the log's order is one.
 *
 *   off → on, or shortened: takes effect now (the tasks waiting keep waiting for a person, even under an older,
 *     longer setting: they were not waiting for this one);
 *   lengthened: nothing new is let through, so the tasks it already applied to keep it, with the longer wait;
 *   off: every gate waits for a person.
 *
 * Pure: the store, the daemon, the CLI and the board share it.
 */

/** Settings that let work through without a person: a gate approved, a question answered, decisions promoted (demo). */
export const UNATTENDED_KEYS = ['autoApproveAfterMs', 'autoReplyAfterMs', 'autoReply', 'demo'] as const;

/** What a change of `autoApproveAfterMs` meant, in its `project.config` event and the PATCH's answer. */
export interface AutoApprovalChange {
  /** The setting now; null: off. */
  afterMs: number | null;
  /** The setting before. */
  previousMs: number | null;
  /** Tasks at a gate that the setting does not apply to: they wait for a person. */
  waiting: number;
}

/** The project's `autoApproveAfterMs`, or null when it has none (settings are validated when saved; read leniently). */
export function autoApproveAfterMs(config: Record<string, unknown>): number | null {
  const v = config.autoApproveAfterMs;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

/** Whether `after` lets through what `before` did not: switched on, or a shorter wait. It takes effect from now. */
export function widensAutoApproval(beforeMs: number | null, afterMs: number | null): boolean {
  return afterMs !== null && (beforeMs === null || afterMs < beforeMs);
}

const duration = (ms: number): string => (ms >= 1000 ? `${ms} ms (${+(ms / 1000).toFixed(1)} s)` : `${ms} ms`);

/** What the change means for the person who made it (the CLI's answer, the serve terminal's line). */
export function autoApprovalSentence(c: AutoApprovalChange): string {
  if (c.afterMs === null) return `every gate waits for a person again${c.waiting ? ` (${c.waiting} waiting now)` : ''}`;
  if (widensAutoApproval(c.previousMs, c.afterMs)) {
    const waiting = c.waiting === 0 ? 'no task is waiting at a gate now' : c.waiting === 1 ? 'the 1 already waiting still waits for you' : `the ${c.waiting} already waiting still wait for you`;
    return `tasks reaching a gate from now on are approved after ${duration(c.afterMs)} without a person; ${waiting}`;
  }
  const before = c.waiting ? `; ${c.waiting} waiting since before it was switched on still wait${c.waiting === 1 ? 's' : ''} for you` : '';
  return `tasks at a gate are approved after ${duration(c.afterMs)} without a person (it was ${duration(c.previousMs!)})${before}`;
}
