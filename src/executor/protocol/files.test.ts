import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJsonLines } from './files.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-lines-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readJsonLines', () => {
  it('streams lines across chunk boundaries, skips a line past the limit with its number and size, and leaves a torn tail for later', () => {
    const path = join(dir, 'transcript.jsonl');
    const long = JSON.stringify({ text: 'y'.repeat(3 * 1024 * 1024) });
    const huge = JSON.stringify({ text: 'z'.repeat(300_000) });
    writeFileSync(path, `${JSON.stringify({ n: 1 })}\n${long}\nnot json\n${huge}\n${JSON.stringify({ n: 2 })}\n{"n":`);
    // A 256 KiB limit stands in for the real 64 MiB one; the 3 MiB line is under neither in the default call.
    const small = readJsonLines<{ n?: number; text?: string }>(path, 0, { maxLineBytes: 4 * 1024 * 1024 });
    expect(small.records.map((r) => r.n ?? r.text!.length)).toEqual([1, 3 * 1024 * 1024, 300_000, 2]);
    const limited = readJsonLines<{ n?: number }>(path, 0, { maxLineBytes: 256 * 1024 });
    expect(limited.records.map((r) => r.n ?? 'long')).toEqual([1, 2]);
    expect(limited.oversized).toEqual([
      { line: 2, bytes: long.length },
      { line: 4, bytes: huge.length },
    ]);
    expect(limited.corrupt).toEqual([{ line: 3, text: 'not json' }]);
    appendFileSync(path, '3}\n');
    const rest = readJsonLines<{ n: number }>(path, limited.nextOffset);
    expect(rest.records).toEqual([{ n: 3 }]);
  });
});
