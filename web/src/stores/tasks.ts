/**
 * The selected project's tasks, kept live: the WebSocket feed's events patch
 * the status at once and refetch the task shortly after (a burst of events for
 * one task costs one request). A read never puts back an older state than the
 * one shown (`fresher`).
 *
 * A next version (a rejection, a retry from main) moves the old one's dependents and subtasks to it; the daemon
 * sends a task.edited event for each one moved (store/ops/nextVersion.ts), and each is read again on its event
 * like any other change.
 */
import { create } from 'zustand';
import { api, ApiError } from '../api/client.js';
import { summarizeTask, type CardMergeCheck, type CardMergeTurn, type MaestroEvent, type Task, type TaskStatus, type TaskSummary } from '../api/types.js';

interface TasksState {
  projectId: string | null;
  /** Slim rows (what the board and the dependency graph read). */
  byId: Record<string, TaskSummary>;
  loading: boolean;
  error: string | null;
  /** Bumped on every event for a task, so an open detail knows to refresh. */
  touched: Record<string, number>;
  /** Tasks deleted or gone while shown. */
  gone: Record<string, true>;
  load(projectId: string): Promise<void>;
  applyEvent(e: MaestroEvent): void;
  /**
   * A task read from the daemon; `mergeCheck` from its detail (the merge check at work), and `mergeTurn` (the task
   * whose merge check it waits behind), which the card names.
   */
  upsert(task: Task, mergeCheck?: CardMergeCheck | null, mergeTurn?: CardMergeTurn | null): void;
  refetch(id: string): Promise<void>;
}

const pending = new Map<string, ReturnType<typeof setTimeout>>();
/** The list request in flight per project. */
const inflight = new Map<string, Promise<void>>();
/** The one list request queued behind it: load() while one runs may know of changes that one was read before. */
const queued = new Map<string, Promise<void>>();

/**
 * A row read from the server replaces the one shown unless the one shown is newer: an event applied
 * while the read was under way (its `updatedAt` is the event's time). Under load a list read before a
 * status change could land after the change's event, and the card went back until the next event.
 */
function fresher<T extends { updatedAt: number }>(shown: T | undefined, read: T): T {
  return shown && shown.updatedAt > read.updatedAt ? shown : read;
}

export const useTasks = create<TasksState>((set, get) => ({
  projectId: null,
  byId: {},
  loading: false,
  error: null,
  touched: {},
  gone: {},
  load(projectId) {
    const running = inflight.get(projectId);
    if (running) {
      let next = queued.get(projectId);
      if (!next) {
        next = running.then(() => {
          queued.delete(projectId);
          // Only while it is still the project shown: a read of the last one would bring it back.
          if (get().projectId === projectId) return get().load(projectId);
        });
        queued.set(projectId, next);
      }
      return next;
    }
    set({ projectId, loading: true, error: null, ...(get().projectId !== projectId ? { byId: {} } : {}) });
    const p = (async () => {
      try {
        const { tasks } = await api.tasks(projectId);
        if (get().projectId !== projectId) return;
        const shown = get().byId;
        set({ byId: Object.fromEntries(tasks.map((t) => [t.id, fresher(shown[t.id], t)])), loading: false });
      } catch (err) {
        set({ loading: false, error: (err as Error).message });
      } finally {
        inflight.delete(projectId);
      }
    })();
    inflight.set(projectId, p);
    return p;
  },
  upsert(task, mergeCheck = null, mergeTurn = null) {
    if (task.projectId !== get().projectId) return;
    set({ byId: { ...get().byId, [task.id]: fresher(get().byId[task.id], summarizeTask(task, mergeCheck, mergeTurn)) } });
  },
  async refetch(id) {
    try {
      const { task, mergeCheck, mergeTurn } = await api.task(id);
      get().upsert(task, mergeCheck && { round: mergeCheck.round, maxRounds: mergeCheck.maxRounds, state: mergeCheck.state }, mergeTurn);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        const { [id]: _removed, ...rest } = get().byId;
        set({ byId: rest, gone: { ...get().gone, [id]: true } });
      }
    }
  },
  applyEvent(e) {
    if (!e.taskId || (e.projectId && e.projectId !== get().projectId)) return;
    const id = e.taskId;
    const known = get().byId[id];
    if (e.type === 'task.status' && known && typeof e.payload.to === 'string') {
      // Out of merging, no merge check runs any more, nor does it wait for one (the refetch that follows says the rest).
      const merging = e.payload.to === 'merging';
      set({ byId: { ...get().byId, [id]: { ...known, status: e.payload.to as TaskStatus, updatedAt: e.at, mergeCheck: merging ? known.mergeCheck : null, mergeTurn: merging ? known.mergeTurn : null } } });
    }
    touch(id);
    // A merge check started or ended: the project's other tasks in merging wait behind it, or no longer do (their
    // cards and open details say whose turn it is), though no event of their own says so.
    if ((e.type === 'run.started' || e.type === 'run.finished') && e.payload.kind === 'merge_check') {
      for (const other of Object.values(get().byId)) if (other.id !== id && other.status === 'merging') touch(other.id);
    }
  },
}));

/** A change to the task: an open detail refreshes, and the task is read again shortly (once for a burst). */
function touch(id: string): void {
  const { touched } = useTasks.getState();
  useTasks.setState({ touched: { ...touched, [id]: (touched[id] ?? 0) + 1 } });
  const t = pending.get(id);
  if (t) clearTimeout(t);
  pending.set(
    id,
    setTimeout(() => {
      pending.delete(id);
      void useTasks.getState().refetch(id);
    }, 150),
  );
}
