import { afterEach, describe, expect, it, vi } from 'vitest';
import { print } from './common.js';

afterEach(() => vi.restoreAllMocks());

describe('print (human output)', () => {
  it("shows a task title's or a finding's control characters instead of letting the terminal run them", () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    print('Fix the parser\u001b[2K\u001b[1A\r  [low, code] all good\n\tline two');
    expect(written.join('')).toBe('Fix the parser\\u{1b}[2K\\u{1b}[1A\\u{d}  [low, code] all good\n\tline two\n');
  });
});
