/**
 * Decomposed tasks: a parent waits in `waiting_children` until every one of its subtasks is finished. It is done
 * when each is done. A superseded subtask does not count: a person's reject at its gate replaced it with its next
 * version (same parent), which counts instead. A cancelled one means part of the work never landed, so the parent
 * goes to needs_attention, naming it, for a person to decide: retry the parent (its cancelled subtasks run again,
 * store/ops/taskTree.ts) or cancel it. Before, a cancelled subtask was dropped from the count: with one cancelled
 * the parent was "done", with all cancelled it waited forever.
 */
import { FINISHED_STATUSES } from '../core/status.js';
import type { Task } from '../core/types.js';
import type { Store } from '../store/store.js';

/** Moves every parent whose current subtasks are all finished to done, or to needs_attention if one was cancelled. */
export async function finishParents(store: Store, onChange: () => void): Promise<void> {
  for (const id of await store.tasks.settledParents()) {
    const children = await store.tasks.list({ parentId: id, limit: 10_000 });
    const current = children.filter((c) => c.status !== 'superseded');
    if (!current.every((c) => FINISHED_STATUSES.includes(c.status))) continue;
    const cancelled = current.filter((c) => c.status === 'cancelled');
    if (current.length && !cancelled.length) {
      await store.tasks.transition(id, 'done', { from: 'waiting_children', reason: 'all subtasks done' });
    } else {
      const reason = unfinishedReason(cancelled);
      await store.tasks.transition(id, 'needs_attention', { from: 'waiting_children', fields: { lastRunError: reason }, reason });
    }
    onChange();
  }
}

/** Why a parent whose subtasks are over is not done, and what a person can do about it. */
export function unfinishedReason(cancelled: readonly Pick<Task, 'id' | 'title'>[]): string {
  if (!cancelled.length) return 'no subtask is left to do its work: retry this task to run it again, or cancel it.';
  const one = cancelled.length === 1;
  const names = cancelled.map((c) => `${c.id} "${c.title}"`).join(', ');
  return `${one ? 'a subtask was' : `${cancelled.length} subtasks were`} cancelled, so ${one ? 'its' : 'their'} part of the work never landed: ${names}. Retry this task to run ${one ? 'it' : 'them'} again (subtasks that are done stay done), or cancel it.`;
}
