/** Decomposed tasks: a parent waits in `waiting_children` until its subtasks are done. */
import type { Store } from '../store/store.js';

/** Moves to done every parent whose live subtasks (not superseded or cancelled) are all done. */
export async function finishParents(store: Store, onChange: () => void): Promise<void> {
  const waiting = await store.tasks.list({ status: 'waiting_children', limit: 10_000 });
  for (const parent of waiting) {
    const children = await store.tasks.list({ parentId: parent.id, limit: 10_000 });
    const live = children.filter((c) => c.status !== 'superseded' && c.status !== 'cancelled');
    if (live.length && live.every((c) => c.status === 'done')) {
      await store.tasks.transition(parent.id, 'done', { from: 'waiting_children', reason: 'all subtasks done' });
      onChange();
    }
  }
}
