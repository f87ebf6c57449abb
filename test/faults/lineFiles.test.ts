/**
 * The run's line files (outbox.ndjson, transcript.jsonl) on a disk that fills, on a real small tmpfs. A
 * line that does not fit is written in part (the kernel writes what fits, then says ENOSPC); the part
 * stayed, with no newline, and the writer's next line, written once there was room again and reported as
 * written, was glued to it: one line that is not JSON, and that record lost (a run's result, say). Now a
 * failed append takes its part back off, so the next line starts on a line of its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendJsonLine, readJsonLines } from '../../src/executor/protocol/files.js';
import { mountTmpfs, requireTmpfs, type Tmpfs } from './tmpfs.js';

const mountable = requireTmpfs('faults: line files on a full disk');

describe.skipIf(!mountable)('a line file on a full disk', () => {
  let disk: Tmpfs | null = null;
  afterEach(() => {
    disk?.unmount();
    disk = null;
  });

  it('a line that does not fit leaves nothing behind, and the next line after space is freed reads whole', () => {
    disk = mountTmpfs(1);
    const file = join(disk.dir, 'outbox.ndjson');
    appendJsonLine(file, { seq: 1, type: 'phase' });
    const before = readFileSync(file);
    // Full, but for the rest of the file's last page: a longer line goes in part way, up to the page's end.
    disk.fill();
    expect(() => appendJsonLine(file, { seq: 2, type: 'token', text: 'x'.repeat(64 * 1024) })).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(readFileSync(file)).toEqual(before);
    disk.free();
    appendJsonLine(file, { seq: 3, type: 'result', ok: true });
    const read = readJsonLines<{ seq: number }>(file);
    expect(read.corrupt).toEqual([]);
    expect(read.records.map((r) => r.seq)).toEqual([1, 3]);
    expect(readFileSync(file).subarray(0, before.length)).toEqual(before);
  });
});
