/**
 * Hash routes: #/board, #/task/<id>, #/task/<id>/review (the task full width, for a diff), #/settings, #/metrics, #/daemons, #/knowledge,
 * #/knowledge/entry/<id>, #/knowledge/review, #/knowledge/review/<session> (one session's candidates), #/knowledge/audit, #/observer,
 * #/observer/<id>. Hash routing needs nothing from the server beyond `/`.
 */
import { create } from 'zustand';

export type Route =
  | { name: 'board'; taskId?: string; wide?: boolean }
  | { name: 'settings' }
  | { name: 'metrics' }
  | { name: 'daemons' }
  | { name: 'knowledge'; view: 'search' | 'review' | 'audit' | 'entry'; id?: string }
  | { name: 'observer'; id?: string }
  | { name: 'unknown'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/board';
  const parts = path.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [head, a, b] = parts;
  if (head === 'board' && !a) return { name: 'board' };
  if (head === 'task' && a && !b) return { name: 'board', taskId: a };
  if (head === 'task' && a && b === 'review' && parts.length === 3) return { name: 'board', taskId: a, wide: true };
  if (head === 'settings' && !a) return { name: 'settings' };
  if (head === 'metrics' && !a) return { name: 'metrics' };
  if (head === 'daemons' && !a) return { name: 'daemons' };
  if (head === 'knowledge') {
    if (!a) return { name: 'knowledge', view: 'search' };
    if ((a === 'review' || a === 'audit') && !b) return { name: 'knowledge', view: a };
    if (a === 'review' && b && parts.length === 3) return { name: 'knowledge', view: 'review', id: b };
    if (a === 'entry' && b) return { name: 'knowledge', view: 'entry', id: b };
  }
  if (head === 'observer' && !b) return a ? { name: 'observer', id: a } : { name: 'observer' };
  return { name: 'unknown', path };
}

export function href(route: Route): string {
  const e = encodeURIComponent;
  switch (route.name) {
    case 'board':
      return route.taskId ? `#/task/${e(route.taskId)}${route.wide ? '/review' : ''}` : '#/board';
    case 'knowledge':
      if (route.view === 'entry') return `#/knowledge/entry/${e(route.id ?? '')}`;
      if (route.view === 'review' && route.id) return `#/knowledge/review/${e(route.id)}`;
      return route.view === 'search' ? '#/knowledge' : `#/knowledge/${route.view}`;
    case 'observer':
      return route.id ? `#/observer/${e(route.id)}` : '#/observer';
    case 'unknown':
      return `#${route.path}`;
    default:
      return `#/${route.name}`;
  }
}

interface RouteState {
  route: Route;
  sync(): void;
}

export const useRoute = create<RouteState>((set) => ({
  route: parseRoute(typeof window === 'undefined' ? '' : window.location.hash),
  sync: () => set({ route: parseRoute(window.location.hash) }),
}));

export function navigate(route: Route): void {
  window.location.hash = href(route);
  useRoute.getState().sync();
}
