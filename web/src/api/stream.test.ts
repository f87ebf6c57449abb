import { describe, expect, it, vi } from 'vitest';
import { openTaskStream } from './stream.js';
import type { StreamItem } from './types.js';

/** A scriptable EventSource: the test plays the server. */
class FakeSource {
  static all: FakeSource[] = [];
  readyState = 0;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  listeners = new Map<string, ((e: MessageEvent) => void)[]>();
  constructor(readonly url: string) {
    FakeSource.all.push(this);
  }
  addEventListener(kind: string, fn: (e: MessageEvent) => void) {
    this.listeners.set(kind, [...(this.listeners.get(kind) ?? []), fn]);
  }
  close() {
    this.readyState = 2;
  }
  emit(kind: string, id: string, data: unknown) {
    for (const fn of this.listeners.get(kind) ?? []) fn(new MessageEvent(kind, { data: typeof data === 'string' ? data : JSON.stringify(data), lastEventId: id }));
  }
  die() {
    this.readyState = 2;
    this.onerror?.();
  }
}

describe('openTaskStream', () => {
  it('delivers items and, when the daemon drops it, reconnects after the last id seen', async () => {
    vi.useFakeTimers();
    FakeSource.all = [];
    const items: StreamItem[] = [];
    const states: string[] = [];
    const s = openTaskStream('t 1', { onItem: (i) => items.push(i), onState: (st) => states.push(st) }, { EventSourceImpl: FakeSource as unknown as typeof EventSource, retryMs: 10 });
    const first = FakeSource.all[0]!;
    expect(first.url).toBe('/api/tasks/t%201/stream');
    first.onopen?.();
    first.emit('token', 'r1:1', { runId: 'r1', seq: 1, text: 'hel' });
    first.emit('token', 'r1:2', '{not json');
    first.emit('token', 'r1:3', { runId: 'r1', seq: 3, text: 'lo' });
    first.die();
    expect(states).toEqual(['open', 'reconnecting']);
    await vi.advanceTimersByTimeAsync(100);
    const second = FakeSource.all[1]!;
    expect(second.url).toBe('/api/tasks/t%201/stream?lastEventId=r1%3A3');
    // What the replay left out comes with no id of its own (the browser's lastEventId is still the last item's).
    second.emit('replay.truncated', 'r1:3', { runId: 'r2', firstSeq: 1, unreadBytes: 2_000_000, transcript: '/api/tasks/t%201/transcript?runId=r2', runs: [{ runId: 'r2', firstSeq: 1, unreadBytes: 2_000_000, transcript: '/api/tasks/t%201/transcript?runId=r2' }] });
    second.emit('phase', 'r2:1', { runId: 'r2', seq: 1, stage: 'agent', state: 'start' });
    const shown = (i: StreamItem) => (i.kind === 'replay.truncated' ? i.data.transcript : (i.data.text ?? i.data.stage));
    expect(items.map((i) => [i.id, i.kind, shown(i)])).toEqual([
      ['r1:1', 'token', 'hel'],
      ['r1:3', 'token', 'lo'],
      ['replay.truncated:1', 'replay.truncated', '/api/tasks/t%201/transcript?runId=r2'],
      ['r2:1', 'phase', 'agent'],
    ]);
    expect(s.lastEventId()).toBe('r2:1');
    s.close();
    second.die();
    await vi.advanceTimersByTimeAsync(1000);
    expect(FakeSource.all.length).toBe(2);
    vi.useRealTimers();
  });
});
