/**
 * What a run that could not start does to its claimed task. The database going away (a restart) is
 * nobody's fault: the task keeps its status and claim, and the next tick's reconcile gives it the run its
 * status calls for. Nor is a shared remote that does not answer: the health report says so, the run starts
 * once it does, and the task's trace says so once per claim (other daemons' boards show it claimed, with no
 * run and no health condition). Nor is a project archived since the claim: the task goes back to ready. Nor is
 * a review taken over from a stopped daemon whose execute never reached the remote (WORK_NOT_PUBLISHED): back to
 * ready, to be executed again, its last error saying why.
 * Only the task's own failures need a person.
 */
import { coerceError, isMaestroError, MaestroError } from '../core/errors.js';
import type { RunKind, Task } from '../core/types.js';
import type { Store } from '../store/store.js';

export async function runNotStarted(store: Store, at: { owner: string; task: Task; kind: RunKind; onError: (err: Error) => void }, e: Error): Promise<void> {
  const { owner, task, kind, onError } = at;
  if (isMaestroError(e, 'DATABASE_UNREACHABLE')) return onError(e);
  if (isMaestroError(e, 'REMOTE_UNREACHABLE')) {
    const waiting = { projectId: task.projectId, taskId: task.id, type: 'run.waiting', payload: { kind, owner, reason: e.message } };
    await store.events.appendOnce(waiting, `run.waiting:${task.id}:${task.attempt}`).catch((err: unknown) => onError(coerceError(err)));
    return;
  }
  const current = await store.tasks.row(task.id);
  if (current.claimedBy === owner && isMaestroError(e, 'PROJECT_ARCHIVED')) {
    // Archived after this daemon claimed the task: it goes back to ready, to wait for a restore (nobody's fault).
    await store.tasks.advance({ id: task.id, owner, attempt: current.attempt }, current.status, 'ready', {}, [
      { projectId: task.projectId, taskId: task.id, type: 'run.refused', payload: { kind, message: e.message } },
    ]);
  } else if (current.claimedBy === owner && isMaestroError(e, 'WORK_NOT_PUBLISHED')) {
    // Taken over at its stage, but the work of the stage before never reached the shared remote: nobody's fault
    // here either; it is done again, and the task's last error says why.
    await store.tasks.advance({ id: task.id, owner, attempt: current.attempt }, current.status, 'ready', { lastRunError: e.message }, [
      { projectId: task.projectId, taskId: task.id, type: 'run.refused', payload: { kind, message: e.message } },
    ]);
  } else if (current.claimedBy === owner) {
    await store.tasks.advance({ id: task.id, owner, attempt: current.attempt }, current.status, 'needs_attention', { lastRunError: e.message }, [
      { projectId: task.projectId, taskId: task.id, type: 'run.refused', payload: { kind, message: e.message } },
    ]);
  }
  if (!(e instanceof MaestroError)) onError(e);
}
