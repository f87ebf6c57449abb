/**
 * The board's live feed: /api/ws sends every stored event. The connection
 * reopens with backoff when the daemon goes away; on reopening, the caller
 * reloads (events sent while we were away are not replayed by the socket).
 */
import { reconnect } from './reconnect.js';
import { withToken } from './token.js';
import type { MaestroEvent } from './types.js';

export type FeedState = 'connecting' | 'open' | 'closed';

export interface FeedHandlers {
  onEvent(e: MaestroEvent): void;
  onState(state: FeedState, reconnected: boolean): void;
}

export function wsUrl(): string {
  const { protocol, host } = window.location;
  return withToken(`${protocol === 'https:' ? 'wss' : 'ws'}://${host}/api/ws`);
}

export function openFeed(url: string, handlers: FeedHandlers, opts: { WebSocketImpl?: typeof WebSocket; retryMs?: number } = {}): { close(): void; subscribe(projectId: string | null): void } {
  const Impl = opts.WebSocketImpl ?? WebSocket;
  let socket: WebSocket | null = null;
  let everOpened = false;
  let projectId: string | null = null;

  const connect = () => {
    handlers.onState('connecting', false);
    const ws = new Impl(url);
    socket = ws;
    ws.onopen = () => {
      const reconnected = everOpened;
      everOpened = true;
      link.opened();
      if (projectId) ws.send(JSON.stringify({ type: 'subscribe', projectId }));
      handlers.onState('open', reconnected);
    };
    ws.onmessage = (m) => {
      let msg: { type?: string; event?: MaestroEvent };
      try {
        msg = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (msg.type === 'event' && msg.event) handlers.onEvent(msg.event);
    };
    ws.onclose = () => {
      if (link.stopped) return;
      handlers.onState('closed', false);
      link.lost();
    };
  };
  const link = reconnect(connect, opts.retryMs);
  connect();
  return {
    close() {
      link.stop();
      socket?.close();
    },
    subscribe(id) {
      projectId = id;
      if (socket?.readyState === 1) socket.send(JSON.stringify({ type: 'subscribe', projectId: id }));
    },
  };
}
