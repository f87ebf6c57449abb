/**
 * The notifier's coalescing, with sends held and released by hand: a burst of
 * pokes costs two notifications, the last of them sent after the last poke.
 */
import { describe, expect, it } from 'vitest';
import { EventNotifier } from './pgNotifier.js';

/** A send the test finishes by hand; `log` records each send's start with the pokes made before it. */
function heldSends() {
  const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const starts: number[] = [];
  let pokes = 0;
  const send = () => {
    starts.push(pokes);
    return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
  };
  const started = async (n: number) => {
    while (starts.length < n) await new Promise((r) => setImmediate(r));
  };
  return { send, pending, starts, poked: () => pokes++, started };
}

describe('EventNotifier', () => {
  it('sends at once, folds the pokes made during a send into one more send after them, and resolves each poke after a send that followed it', async () => {
    const h = heldSends();
    const n = new EventNotifier(h.send, { gapMs: 0 });
    h.poked();
    const first = n.poke();
    await h.started(1);
    let firstDone = false;
    void first.then(() => (firstDone = true));
    const later: Promise<void>[] = [];
    for (let i = 0; i < 100; i++) {
      h.poked();
      later.push(n.poke());
    }
    h.pending[0]!.resolve();
    await h.started(2);
    // The second send began after all 101 pokes; no poke promise is settled before it ends.
    expect(h.starts).toEqual([1, 101]);
    expect(firstDone).toBe(false);
    h.pending[1]!.resolve();
    await Promise.all([first, ...later]);
    expect(h.starts).toHaveLength(2);
    expect(n.sent).toBe(2);
    await n.close();
  });

  it('waits out the gap before the next send, and close() sends the pending one at once and takes no more pokes', async () => {
    const h = heldSends();
    const n = new EventNotifier(h.send, { gapMs: 600_000 });
    const first = n.poke();
    await h.started(1);
    h.pending[0]!.resolve();
    // The first burst is over (nothing was pending); the next one still waits for the gap.
    await first;
    for (let i = 0; i < 20; i++) void n.poke();
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(h.starts).toHaveLength(1);
    // Ten minutes of gap: only close() lets the second send out.
    const closing = n.close();
    await h.started(2);
    h.pending[1]!.resolve();
    await closing;
    await n.poke();
    expect(h.starts).toHaveLength(2);
  });

  it('reports a failed send and does not retry it; the next poke sends again', async () => {
    const h = heldSends();
    const errors: string[] = [];
    const n = new EventNotifier(h.send, { gapMs: 0, onError: (e) => errors.push(e.message) });
    const first = n.poke();
    await h.started(1);
    h.pending[0]!.reject(new Error('connection refused'));
    await first;
    expect(errors).toEqual(['connection refused']);
    expect(h.starts).toHaveLength(1);
    const second = n.poke();
    await h.started(2);
    h.pending[1]!.resolve();
    await second;
    expect(n.sent).toBe(1);
    await n.close();
  });

  it('close() with nothing pending sends nothing', async () => {
    const h = heldSends();
    const n = new EventNotifier(h.send);
    await n.close();
    await n.close();
    expect(h.starts).toEqual([]);
  });
});
