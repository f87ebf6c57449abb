/**
 * Multi-process suites for the corpus writers: concurrent appends lose
 * nothing; a writer killed between its temporary write and the rename leaves
 * the old file intact and its locks reclaimable.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot } from '../helpers/knowledge.js';
import { withCorpusLock } from '../../src/knowledge/format/lock.js';
import { parseSpecText } from '../../src/knowledge/format/specParser.js';
import { appendSpecEntry } from '../../src/knowledge/format/specWriter.js';
import { budget } from '../helpers/budget.js';
import { scriptArgs } from '../helpers/script.js';

const WORKER = join(import.meta.dirname, 'appendWorker.ts');

function run(args: string[]): { done: Promise<number | null>; child: ReturnType<typeof spawn>; firstLine: Promise<string> } {
  const child = spawn(process.execPath, [...scriptArgs(WORKER), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const firstLine = new Promise<string>((resolve) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
  });
  const done = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      if (code) process.stderr.write(err);
      resolve(code);
    }),
  );
  return { done, child, firstLine };
}

// Many short-lived processes on a shared 2-core machine: generous time, no timing assertions.
describe('corpus writes across processes', { timeout: budget(240_000) }, () => {
  it('8 processes × 50 appends to one spec file → 400 entries, none lost, the file parses', async () => {
    const { dir, root } = tempRoot();
    const workers = Array.from({ length: 8 }, (_, w) => run(['append', dir, String(w), '50']));
    expect(await Promise.all(workers.map((w) => w.done))).toEqual(Array(8).fill(0));
    const file = join(root.workflowDir, 'specs', 'learnings.md');
    const parsed = parseSpecText(readFileSync(file, 'utf8'), file);
    expect(parsed.findings).toEqual([]);
    expect(parsed.entries).toHaveLength(400);
    const titles = new Set(parsed.entries.map((e) => e.title));
    for (let w = 0; w < 8; w++) for (let i = 0; i < 50; i++) expect(titles.has(`worker ${w} entry ${i}`)).toBe(true);
    expect(new Set(parsed.entries.map((e) => e.sid)).size).toBe(400);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a writer killed between the temporary write and the rename leaves the old file, and the next writer proceeds', async () => {
    const { dir, root } = tempRoot();
    appendSpecEntry(root, { category: 'learning', title: 'before the crash', content: 'kept', keywords: ['crash'] });
    const file = join(root.workflowDir, 'specs', 'learnings.md');
    const before = readFileSync(file, 'utf8');
    const w = run(['hang-before-rename', dir]);
    expect(await w.firstLine).toBe('READY');
    expect(existsSync(`${file}.tmp`)).toBe(true);
    w.child.kill('SIGKILL');
    await w.done;
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(parseSpecText(before, file).entries.map((e) => e.title)).toEqual(['before the crash']);
    // The dead writer's lock file is still there; its kernel lock died with it.
    expect(existsSync(`${file}.lock`)).toBe(true);
    const next = appendSpecEntry(root, { category: 'learning', title: 'after the crash', content: 'fine', keywords: ['crash'] });
    expect(next.id).toBe('spec:project:learnings-002');
    expect(parseSpecText(readFileSync(file, 'utf8'), file).entries.map((e) => e.title)).toEqual(['before the crash', 'after the crash']);
  });

  it('waits for a live lock file and times out with a clear error; reclaims an unparseable one only when old', () => {
    const { root } = tempRoot();
    const target = join(root.workflowDir, 'specs', 'x.md');
    appendSpecEntry(root, { category: 'learning', title: 't', content: 'c', keywords: ['k'], file: 'x.md' });
    writeFileSync(`${target}.lock`, JSON.stringify({ pid: process.ppid, token: 'other', createdAt: Date.now() }));
    expect(() => withCorpusLock([target], () => 1, { timeoutMs: 200 })).toThrow(/Timed out waiting for .*x\.md\.lock \(held by pid \d+\)/);
    writeFileSync(`${target}.lock`, 'garbage');
    expect(() => withCorpusLock([target], () => 1, { timeoutMs: 200 })).toThrow(/Timed out/);
    writeFileSync(`${target}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, token: 'dead', createdAt: 0 }));
    expect(withCorpusLock([target], () => 'reclaimed', { timeoutMs: 200 })).toBe('reclaimed');
    expect(existsSync(`${target}.lock`)).toBe(false);
  });
});
