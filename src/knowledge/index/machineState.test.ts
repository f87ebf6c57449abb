/**
 * excludeMachineState: the repository's own info/exclude names Maestro's machine state under a `.workflow/`, once;
 * never through a link, never from a worktree's `.git` file (the agent's to edit), and what was there stays.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../../test/helpers/db.js';
import { excludeMachineState, MACHINE_STATE_LINES } from './machineState.js';

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
    expect(text.split('\n').filter((l) => l.startsWith('/'))).toEqual(MACHINE_STATE_LINES.map((l) => `/${l}`));
    expect(ignored(dir, '.workflow/.maestro-index.db-wal')).toBe(true);
    expect(ignored(dir, '.workflow/.maestro-corpus.lock')).toBe(true);
    expect(ignored(dir, '.workflow/specs/learnings.md')).toBe(false);
    // A .workflow/ in a folder of the repository: its own lines, the first ones kept.
    excludeMachineState(join(dir, 'packages', 'api', '.workflow'));
    expect(ignored(dir, 'packages/api/.workflow/.maestro-index.db')).toBe(true);
    expect(exclude(dir).match(/^# Maestro:/gm)).toHaveLength(1);
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

    // A worktree's .git file may name any folder: nothing is written from it.
    const planted = tempDir('maestro-planted-');
    mkdirSync(join(planted, 'info'));
    const worktree = tempDir('maestro-worktree-');
    writeFileSync(join(worktree, '.git'), `gitdir: ${planted}\n`);
    excludeMachineState(join(worktree, '.workflow'));
    expect(() => readFileSync(join(planted, 'info', 'exclude'))).toThrow();
  });
});
