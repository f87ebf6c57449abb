/** `maestro daemons` says ages are by the database's clock only when the asked daemon's clock is off from it by seconds. */
import { describe, expect, it } from 'vitest';
import { clockSkewLine } from './daemons.js';

describe('the clock line of maestro daemons', () => {
  it("says how far the asked daemon's clock is from the database's, only when it is seconds off (PostgreSQL)", () => {
    expect(clockSkewLine({ self: 'laptop', clockSkewMs: 300_400 })).toBe("Ages are by the database's clock: laptop's clock is 300 s ahead of it.\n");
    expect(clockSkewLine({ self: 'laptop', clockSkewMs: -61_000 })).toBe("Ages are by the database's clock: laptop's clock is 61 s behind it.\n");
    expect(clockSkewLine({ self: 'a\nb', clockSkewMs: -61_000 })).toContain('a\\u{a}b');
    expect(clockSkewLine({ self: 'laptop', clockSkewMs: 1_500 })).toBe('');
    expect(clockSkewLine({ self: 'laptop', clockSkewMs: null })).toBe('');
  });
});
