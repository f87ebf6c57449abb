/**
 * Observer live updates from the daemon's WebSocket. The daemon forwards each
 * `observerEvents` 'update' as a stored-event-shaped message
 * `{type:'event', event:{type:'observer.update', projectId:null, payload:ObserverUpdate}}`
 * (src/daemon/daemon.ts; documented in src/observer/README.md, "Live updates",
 * on the observer branch); the observer screen reloads what an update touches.
 */
import { create } from 'zustand';
import type { ObserverUpdate } from '../../../src/observer/events.js';
import type { MaestroEvent } from '../api/types.js';

export type { ObserverUpdate };

interface ObserverFeedState {
  /** Bumped on every update (and on a reconnect, when updates may have been missed). */
  seq: number;
  last: ObserverUpdate | null;
  /** True for an `observer.update` event (consumed here); false for anything else. */
  apply(e: MaestroEvent): boolean;
  missed(): void;
}

function isUpdate(p: unknown): p is ObserverUpdate {
  const u = p as Partial<ObserverUpdate> | null;
  return !!u && u.type === 'session.updated' && typeof u.sessionId === 'string' && u.sessionId.length > 0 && u.sessionId.length <= 200;
}

export const useObserverFeed = create<ObserverFeedState>((set, get) => ({
  seq: 0,
  last: null,
  apply(e) {
    if (e.type !== 'observer.update') return false;
    if (isUpdate(e.payload)) set({ seq: get().seq + 1, last: e.payload });
    return true;
  },
  missed() {
    set({ seq: get().seq + 1, last: null });
  },
}));
