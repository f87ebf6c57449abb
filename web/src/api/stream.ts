/**
 * The live output of a task over SSE. The browser's EventSource resends
 * Last-Event-ID on its own reconnects; when it gives up (the daemon went away
 * and answered with an error), we reopen it ourselves with ?lastEventId= so
 * nothing seen is repeated and nothing missed is lost.
 */
import { apiUrl } from './client.js';
import { withToken } from './token.js';
import { reconnect } from './reconnect.js';
import type { StreamItem } from './types.js';

const KINDS = ['token', 'phase', 'clarify', 'result', 'error'] as const satisfies readonly StreamItem['kind'][];
/** What a replay left out, of each run it spans, in one event (the daemon reads at most 1 MiB of outboxes to replay): sent with no SSE id. */
const REPLAY_TRUNCATED = 'replay.truncated' satisfies StreamItem['kind'];

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
  let notices = 0;

  const connect = () => {
    const url = withToken(apiUrl(`/api/tasks/${encodeURIComponent(taskId)}/stream${lastId ? `?lastEventId=${encodeURIComponent(lastId)}` : ''}`));
    const es = new Impl(url);
    source = es;
    es.onopen = () => {
      link.opened();
      handlers.onState?.('open');
    };
    for (const kind of KINDS) {
      es.addEventListener(kind, (ev) => {
        const msg = ev as MessageEvent<string>;
        if (msg.lastEventId) lastId = msg.lastEventId;
        const data = parsed<Extract<StreamItem, { kind: typeof kind }>['data']>(msg.data);
        if (data) handlers.onItem({ id: msg.lastEventId, kind, data });
      });
    }
    // No SSE id of its own (the event's lastEventId is the item before it): one the board can key it by.
    es.addEventListener(REPLAY_TRUNCATED, (ev) => {
      const data = parsed<Extract<StreamItem, { kind: typeof REPLAY_TRUNCATED }>['data']>((ev as MessageEvent<string>).data);
      if (data) handlers.onItem({ id: `${REPLAY_TRUNCATED}:${++notices}`, kind: REPLAY_TRUNCATED, data });
    });
    es.onerror = () => {
      handlers.onState?.('reconnecting');
      // The browser retries by itself unless the stream is CLOSED (the daemon answered with an error).
      if (es.readyState === 2 /* CLOSED */) link.lost();
    };
  };
  const link = reconnect(connect, opts.retryMs);
  connect();
  return {
    close() {
      link.stop();
      source?.close();
    },
    lastEventId: () => lastId,
  };
}

/** An item's data, or null for a malformed line (skipped: the stream goes on). */
function parsed<T>(text: string): T | null {
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}
