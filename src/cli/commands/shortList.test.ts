import { describe, expect, it } from 'vitest';
import { shortList } from './shortList.js';

describe('shortList', () => {
  it('joins a short list whole', () => {
    expect(shortList(['a', 'b'], 2)).toBe('a, b');
  });

  it('cuts a long one to its first items and counts the rest', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => `t_${i}`);
    expect(shortList(ids)).toBe('t_0, t_1, t_2, t_3, t_4, t_5, t_6, t_7, t_8, t_9, … and 2,990 more');
    expect(shortList(['a', 'b', 'c'], 2)).toBe('a, b, … and 1 more');
  });
});
