import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJsonFile, readJsonLines } from './files.js';
import { INBOX_FILE, readInbox } from './inbox.js';
import { JOB_FILE, readJob } from './job.js';
import { readStages, STAGES_FILE } from './stages.js';

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

describe('a whole-file JSON run file that is not JSON', () => {
  it('is refused naming the file and the place, and quoting nothing of it (job.json, inbox.json, stages.json)', () => {
    const path = join(dir, 'any.json');
    writeFileSync(path, '{\n  "a": 1,\n  "b": nope\n}\n');
    expect(() => readJsonFile(path)).toThrow(`${path} is not valid JSON (line 3, column 8).`);
    writeFileSync(path, '{"a": [1, 2');
    expect(() => readJsonFile(path)).toThrow(`${path} is not valid JSON (it ends early, at line 1, column 12).`);
    // JSON.parse's own message would quote the start of the file: `Unexpected token 'T', "TOPSECRET-1234" is not valid JSON`.
    for (const name of [JOB_FILE, INBOX_FILE, STAGES_FILE]) writeFileSync(join(dir, name), 'TOPSECRET-1234\n');
    const refusals = [() => readJob(dir), () => readInbox(dir), () => readStages(dir)].map((read) => {
      try {
        read();
      } catch (err) {
        return err as Error;
      }
      throw new Error('read a file that is not JSON');
    });
    expect(refusals.map((e) => e.message)).toEqual([
      `cannot read ${join(dir, JOB_FILE)}: ${join(dir, JOB_FILE)} is not valid JSON (line 1, column 1).`,
      `${join(dir, INBOX_FILE)} is not valid JSON (line 1, column 1).`,
      `${join(dir, STAGES_FILE)} is not valid JSON (line 1, column 1).`,
    ]);
    for (const e of refusals) expect(`${e.message} ${String(e.cause)} ${String((e.cause as Error | undefined)?.cause)}`).not.toContain('TOPSECRET');
  });
});
