import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stat } from 'node:fs/promises';
import { settleWrite, writeFileAtomic, writeFileAtomicOffLoop } from './atomicWrite.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'maestro-atomic-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('syncs the file, renames, then syncs the folder; a reader before the rename still sees the old file whole', () => {
    const dir = temp();
    const target = join(dir, 'stages.json');
    writeFileSync(target, 'old');
    const seen: string[] = [];
    writeFileAtomic(target, 'new content', {
      step: (s) => seen.push(s),
      beforeRename: (tmp) => {
        seen.push('before-rename');
        expect(readFileSync(target, 'utf8')).toBe('old');
        expect(readFileSync(tmp, 'utf8')).toBe('new content');
      },
    });
    expect(seen).toEqual(['fsync-file', 'before-rename', 'rename', 'fsync-dir']);
    expect(readFileSync(target, 'utf8')).toBe('new content');
    expect(readdirSync(dir)).toEqual(['stages.json']);
  });

  it('durable: false skips both fsyncs and is still a rename', () => {
    const dir = temp();
    const seen: string[] = [];
    writeFileAtomic(join(dir, 'a', '_index.json'), '{}', { durable: false, mkdir: true, step: (s) => seen.push(s) });
    expect(seen).toEqual(['rename']);
    expect(readFileSync(join(dir, 'a', '_index.json'), 'utf8')).toBe('{}');
  });

  it('a failed rename leaves the old file and no temporary file', () => {
    const dir = temp();
    const target = join(dir, 'job.json');
    writeFileSync(target, 'old');
    expect(() =>
      writeFileAtomic(target, 'new', {
        beforeRename: () => {
          throw new Error('killed before the rename');
        },
      }),
    ).toThrow('killed before the rename');
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['job.json']);
  });

  it('gives the new file its mode from the first byte, and a fixed temporary name only when asked', () => {
    const dir = temp();
    const token = join(dir, 'token');
    writeFileAtomic(token, 'secret\n', { mode: 0o600, beforeRename: (tmp) => expect(statSync(tmp).mode & 0o777).toBe(0o600) });
    expect(statSync(token).mode & 0o777).toBe(0o600);
    const spec = join(dir, 'learnings.md');
    writeFileAtomic(spec, 'x', { tmp: 'fixed', beforeRename: (tmp) => expect(tmp).toBe(`${spec}.tmp`) });
    expect(readFileSync(spec, 'utf8')).toBe('x');
  });

  it('replaces a link planted at the fixed temporary name instead of writing through it', () => {
    const dir = temp();
    const outside = join(temp(), 'victim.txt');
    writeFileSync(outside, 'untouched');
    const spec = join(dir, 'learnings.md');
    symlinkSync(outside, `${spec}.tmp`);
    writeFileAtomic(spec, 'new', { tmp: 'fixed' });
    expect(readFileSync(spec, 'utf8')).toBe('new');
    expect(readFileSync(outside, 'utf8')).toBe('untouched');
    expect(existsSync(`${spec}.tmp`)).toBe(false);
  });
});

describe('writeFileAtomicOffLoop', () => {
  it('takes the same steps in the same order, and the event loop runs while the file syncs, before the rename', async () => {
    const dir = temp();
    const target = join(dir, 'job.json');
    writeFileSync(target, 'old');
    // Started from an I/O callback's turn: an immediate queued now runs before the loop's next poll for I/O,
    // so it runs before the rename if and only if the write yields to the loop for its fsync.
    await stat(dir);
    let turned = false;
    setImmediate(() => (turned = true));
    const seen: string[] = [];
    await writeFileAtomicOffLoop(target, 'new content', {
      step: (s) => seen.push(`${s}${s === 'rename' ? (turned ? ' (loop turned)' : ' (loop blocked)') : ''}`),
      beforeRename: (tmp) => {
        seen.push('before-rename');
        expect(readFileSync(target, 'utf8')).toBe('old');
        expect(readFileSync(tmp, 'utf8')).toBe('new content');
      },
    });
    expect(seen).toEqual(['fsync-file', 'before-rename', 'rename (loop turned)', 'fsync-dir']);
    expect(readFileSync(target, 'utf8')).toBe('new content');
    expect(readdirSync(dir)).toEqual(['job.json']);
  });

  it('a refused rename leaves the old file and no temporary file', async () => {
    const dir = temp();
    const target = join(dir, 'job.json');
    writeFileSync(target, 'old');
    await expect(writeFileAtomicOffLoop(target, 'new', { beforeRename: () => { throw new Error('killed before the rename'); } })).rejects.toThrow('killed before the rename');
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['job.json']);
  });

  it('a reader that settles the write, or another write of the file, finishes it first, in the same steps', async () => {
    const dir = temp();
    const target = join(dir, 'session.json');
    writeFileSync(target, 'old');
    const seen: string[] = [];
    const first = writeFileAtomicOffLoop(target, 'first', { tmp: 'fixed', step: (s) => seen.push(`first ${s}`) });
    expect(readFileSync(target, 'utf8')).toBe('old'); // in flight: its fsync is in the threadpool
    settleWrite(target);
    expect(readFileSync(target, 'utf8')).toBe('first');
    expect(seen).toEqual(['first fsync-file', 'first rename', 'first fsync-dir']);
    // A write of the same file in flight is finished before the next one takes the fixed temporary name.
    const second = writeFileAtomicOffLoop(target, 'second', { tmp: 'fixed', step: (s) => seen.push(`second ${s}`) });
    writeFileAtomic(target, 'third', { tmp: 'fixed', step: (s) => seen.push(`third ${s}`) });
    await Promise.all([first, second]);
    expect(seen.slice(3)).toEqual(['second fsync-file', 'second rename', 'second fsync-dir', 'third fsync-file', 'third rename', 'third fsync-dir']);
    expect(readFileSync(target, 'utf8')).toBe('third');
    expect(readdirSync(dir)).toEqual(['session.json']);
  });
});
