/**
 * excludeMachineState: the repository's own info/exclude names Maestro's machine state under a `.workflow/`, once;
 * never through a link, never from a worktree's `.git` file (the agent's to edit), and what was there stays.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../../../test/helpers/budget.js';
import { removeTempDirs, tempDir } from '../../../test/helpers/db.js';
import { maestroArgs } from '../../../test/helpers/maestro.js';
import { EXCLUDE_LINES, excludeMachineState } from './machineState.js';

afterEach(() => removeTempDirs());

function repo(): string {
  const dir = tempDir('maestro-exclude-');
  execFileSync('git', ['init', '-q', dir]);
  return dir;
}

const exclude = (dir: string) => readFileSync(join(dir, '.git', 'info', 'exclude'), 'utf8');
const ignored = (dir: string, path: string) => {
  try {
    execFileSync('git', ['check-ignore', '-q', path], { cwd: dir });
    return true;
  } catch {
    return false;
  }
};

describe('excludeMachineState', () => {
  it('adds the lines once, anchored to the .workflow/ they are for, after what the file held', () => {
    const dir = repo();
    writeFileSync(join(dir, '.git', 'info', 'exclude'), '# mine\n*.swp');
    excludeMachineState(join(dir, '.workflow'));
    excludeMachineState(join(dir, '.workflow'));
    const text = exclude(dir);
    expect(text.startsWith('# mine\n*.swp\n# Maestro:')).toBe(true);
    expect(text.split('\n').filter((l) => l.startsWith('/'))).toEqual(EXCLUDE_LINES.map((l) => `/${l}`));
    for (const path of ['.workflow/.maestro-index.db-wal', '.workflow/.maestro-corpus.lock', '.workflow/sessions/task-t-5294084c5d21e5ca/session.json']) expect(ignored(dir, path), path).toBe(true);
    // A person's own: specs, a maestro-flow session and its runs (committed there), a lock of theirs, a session named task-….
    for (const path of ['.workflow/specs/learnings.md', '.workflow/sessions/20260922-ui/runs/run-abc/report.md', '.workflow/specs/db.lock', '.workflow/sessions/task-ui-polish/session.json']) expect(ignored(dir, path), path).toBe(false);
    // A .workflow/ in a folder of the repository: its own lines, the first ones kept.
    excludeMachineState(join(dir, 'packages', 'api', '.workflow'));
    expect(ignored(dir, 'packages/api/.workflow/.maestro-index.db')).toBe(true);
    expect(exclude(dir).match(/^# Maestro:/gm)).toHaveLength(1);
  });

  it('writes no line for a .workflow/ under a folder whose name git would read as a pattern', () => {
    const dir = repo();
    excludeMachineState(join(dir, 'pkg\n*\n#', '.workflow'));
    excludeMachineState(join(dir, 'a b', '.workflow'));
    expect(exclude(dir)).not.toContain('Maestro');
    writeFileSync(join(dir, 'mine.txt'), 'x');
    expect(ignored(dir, 'mine.txt')).toBe(false);
  });

  it('writes nothing through a link, and nothing from a linked worktree', () => {
    const dir = repo();
    const elsewhere = tempDir('maestro-elsewhere-');
    writeFileSync(join(elsewhere, 'rc'), 'keep\n');
    const file = join(dir, '.git', 'info', 'exclude');
    execFileSync('rm', [file]);
    symlinkSync(join(elsewhere, 'rc'), file);
    excludeMachineState(join(dir, '.workflow'));
    expect(readFileSync(join(elsewhere, 'rc'), 'utf8')).toBe('keep\n');

    const other = repo();
    execFileSync('rm', ['-r', join(other, '.git', 'info')]);
    symlinkSync(elsewhere, join(other, '.git', 'info'));
    excludeMachineState(join(other, '.workflow'));
    expect(readFileSync(join(elsewhere, 'rc'), 'utf8')).toBe('keep\n');
    expect(() => readFileSync(join(elsewhere, 'exclude'))).toThrow();

    // A FIFO planted as the file: passed over, not read (a read would wait for a writer for good). Through
    // `maestro search` in a process of its own, with a time limit, so that a read that waits fails the test instead
    // of holding it.
    const fifo = repo();
    execFileSync('rm', [join(fifo, '.git', 'info', 'exclude')]);
    execFileSync('mkfifo', [join(fifo, '.git', 'info', 'exclude')]);
    mkdirSync(join(fifo, '.workflow'));
    const env = { ...process.env, MAESTRO_HOME: tempDir('maestro-home-'), MAESTRO_SEARCH_DAEMON: 'off' };
    expect(execFileSync(process.execPath, [...maestroArgs(), 'search', 'anything', '--json'], { cwd: fifo, env, timeout: budget(60_000), encoding: 'utf8' })).toContain('"results"');

    // A worktree's .git file may name any folder: nothing is written from it.
    const planted = tempDir('maestro-planted-');
    mkdirSync(join(planted, 'info'));
    const worktree = tempDir('maestro-worktree-');
    writeFileSync(join(worktree, '.git'), `gitdir: ${planted}\n`);
    excludeMachineState(join(worktree, '.workflow'));
    expect(() => readFileSync(join(planted, 'info', 'exclude'))).toThrow();
  });
});
