import { afterEach, describe, expect, it, vi } from 'vitest';
import { print } from './common.js';
import { printEntry } from './knowledgeShared.js';

afterEach(() => vi.restoreAllMocks());

describe('print (human output)', () => {
  it("shows a task title's or a finding's control characters instead of letting the terminal run them", () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    print('Fix the parser\u001b[2K\u001b[1A\r  [low, code] all good\n\tline two');
    expect(written.join('')).toBe('Fix the parser\\u{1b}[2K\\u{1b}[1A\\u{d}  [low, code] all good\n\tline two\n');
  });

  it("shows a knowledge entry's body as text, its escape sequences as \\u{…}, its CRLF line ends as line ends", () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    const entry = { id: 'spec-1', graphId: 'g', aliases: [], kind: 'spec', type: 'convention', title: 'Use\u001b[8m hidden', category: null, status: 'active', file: 'x.md', line: 1, body: 'Always\r\nrun \u001b[2Jthis\r\n' };
    printEntry(entry as unknown as Parameters<typeof printEntry>[0], false);
    expect(written.join('')).toBe('spec-1  [convention]  Use\\u{1b}[8m hidden\n\nAlways\nrun \\u{1b}[2Jthis\n\n');
  });
});

