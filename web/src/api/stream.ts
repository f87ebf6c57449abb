/**
 * The live output of a task over SSE. The browser's EventSource resends
 * Last-Event-ID on its own reconnects; when it gives up (the daemon went away
 * and answered with an error), we reopen it ourselves with ?lastEventId= so
 * nothing seen is repeated and nothing missed is lost.
 */
import { apiUrl } from './client.js';
import type { StreamItem } from './types.js';

const KINDS = ['token', 'phase', 'clarify', 'result', 'error'] as const;

export interface StreamHandlers {
  onItem(item: StreamItem): void;
  onState?(state: 'open' | 'reconnecting'): void;
}

export interface StreamOptions {
  /** Resume after this id (`<runId>:<seq>`). */
  lastEventId?: string | null;
  retryMs?: number;
  EventSourceImpl?: typeof EventSource;
}

export function openTaskStream(taskId: string, handlers: StreamHandlers, opts: StreamOptions = {}): { close(): void; lastEventId(): string | null } {
  const Impl = opts.EventSourceImpl ?? EventSource;
  let lastId = opts.lastEventId ?? null;
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  let attempt = 0;

  const connect = () => {
    const url = apiUrl(`/api/tasks/${encodeURIComponent(taskId)}/stream${lastId ? `?lastEventId=${encodeURIComponent(lastId)}` : ''}`);
    const es = new Impl(url);
    source = es;
    es.onopen = () => {
      attempt = 0;
      handlers.onState?.('open');
    };
    for (const kind of KINDS) {
      es.addEventListener(kind, (ev) => {
        const msg = ev as MessageEvent<string>;
        if (msg.lastEventId) lastId = msg.lastEventId;
        let data: StreamItem['data'];
        try {
          data = JSON.parse(msg.data) as StreamItem['data'];
        } catch {
          return; // a malformed line is skipped, the stream goes on
        }
        handlers.onItem({ id: msg.lastEventId, kind, data });
      });
    }
    es.onerror = () => {
      handlers.onState?.('reconnecting');
      if (es.readyState !== 2 /* CLOSED */ || closed) return;
      attempt++;
      timer = setTimeout(connect, Math.min(10_000, (opts.retryMs ?? 500) * 2 ** Math.min(attempt, 5)));
    };
  };
  connect();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      source?.close();
    },
    lastEventId: () => lastId,
  };
}
