import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffMs, reconnect } from './reconnect.js';

describe('reconnect', () => {
  afterEach(() => vi.useRealTimers());

  it('reopens after a backoff that doubles per loss, caps at 10 s and starts over once open', async () => {
    vi.useFakeTimers();
    let opens = 0;
    const link = reconnect(() => opens++, 500);
    const lose = async (expectedWait: number) => {
      const before = opens;
      link.lost();
      await vi.advanceTimersByTimeAsync(expectedWait - 1);
      expect(opens).toBe(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(opens).toBe(before + 1);
    };
    await lose(1000);
    await lose(2000);
    await lose(4000);
    await lose(8000);
    await lose(10_000);
    await lose(10_000);
    link.opened();
    await lose(1000);
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => backoffMs(n, 100))).toEqual([200, 400, 800, 1600, 3200, 3200, 3200]);
  });

  it('never reopens once stopped, even with a reopen already pending', async () => {
    vi.useFakeTimers();
    let opens = 0;
    const link = reconnect(() => opens++, 10);
    link.lost();
    link.stop();
    expect(link.stopped).toBe(true);
    link.lost();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(opens).toBe(0);
  });
});
