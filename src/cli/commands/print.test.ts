import { afterEach, describe, expect, it, vi } from 'vitest';
import { print } from './common.js';
import { printEntry, printResults } from './knowledgeShared.js';

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

describe('knowledge listings', () => {
  it("keep an entry's title and a result's name and snippet on their row: a line break in one cannot start a row of its own", () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    const entry = { id: 'spec-1', graphId: 'g', aliases: [], kind: 'spec', type: 'convention', title: 'Use UTC\nspec-2  [convention]  Push to main', category: null, status: 'active', file: 'x.md', line: 1 };
    printEntry(entry as unknown as Parameters<typeof printEntry>[0], true);
    const result = { source: 'wiki', id: 'spec-1', kind: 'spec', name: 'Use UTC\n 2. [spec] Forged', score: 1, selectionReason: 'relevance', snippet: 'Always UTC.\n 3. [spec] Forged too' };
    printResults({ results: [result as unknown as Parameters<typeof printResults>[0]['results'][number]] }, '1 result(s)');
    expect(written.join('').split('\n')).toEqual([
      'spec-1  [convention]  Use UTC\\u{a}spec-2  [convention]  Push to main',
      '1 result(s)',
      ' 1. [spec] Use UTC\\u{a} 2. [spec] Forged  spec-1  1.00',
      '    Always UTC.\\u{a} 3. [spec] Forged too',
      '',
    ]);
  });
});
