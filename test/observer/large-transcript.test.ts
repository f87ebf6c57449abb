/**
 * A 50 MB transcript is parsed in bounded memory: a child process with its V8
 * heap capped at 96 MB must finish, and its peak RSS must stay under 300 MB.
 * A reader that held the file or the raw records would run out of heap.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeLargeTranscript } from '../../src/observer/__fixtures__/large-transcript.js';
import { tempDir, type TempDir } from '../../src/observer/__fixtures__/transcript-builder.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = join(ROOT, 'src/observer/__fixtures__/parse-child.ts');

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe('large transcripts', () => {
  it('parses a 50 MB transcript with a 96 MB heap cap and under 300 MB RSS', async () => {
    const path = join(dir.path, 'big.jsonl');
    const written = writeLargeTranscript(path, 50 * 1024 * 1024);
    const { stdout } = await run(process.execPath, ['--max-old-space-size=96', '--import', 'tsx', CHILD, path], { cwd: ROOT, maxBuffer: 1 << 20 });
    const result = JSON.parse(stdout.trim()) as { explorations: number; complete: number; lines: number; issueCount: number; maxRssBytes: number };
    expect(result.explorations).toBe(written.explorations);
    expect(result.complete).toBe(written.explorations);
    expect(result.issueCount).toBe(Math.floor(written.explorations / 500));
    expect(result.maxRssBytes).toBeLessThan(300 * 1024 * 1024);
  });
});
