/** `maestro init` and the repository's housekeeping: .gitignore lines for Maestro's local state, and the advice to commit .maestro/. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { cli, gitRepo } from './helpers.js';
import { budget } from '../helpers/budget.js';

afterEach(() => removeTempDirs());

/** Which of `paths` git ignores in `repo` (git check-ignore exits 1 when none is). */
function ignored(repo: string, paths: string[]): string[] {
  try {
    return execFileSync('git', ['check-ignore', '--no-index', ...paths], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

describe('maestro init', () => {
  it('ignores the index, locks and session run links under .workflow/, keeps knowledge and .maestro/ tracked, and says to commit .maestro/', async () => {
    const repo = gitRepo({ 'README.md': '# x\n', '.gitignore': 'node_modules/' });
    const first = await cli(['init', repo]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Added 7 line(s) to ${join(repo, '.gitignore')}`);
    expect(first.stdout).toContain('Commit .maestro/');
    expect(first.stdout).toContain('git add .maestro .gitignore');
    const text = readFileSync(join(repo, '.gitignore'), 'utf8');
    expect(text.startsWith('node_modules/\n\n# Maestro:')).toBe(true);

    const local = ['.workflow/.maestro-index.db', '.workflow/.maestro-index.db-wal', '.workflow/.maestro-corpus.lock', '.workflow/knowhow/.lifecycle.lock', '.workflow/sessions/.session-store.lock', '.workflow/sessions/.active-run', '.workflow/sessions/s1/runs/r1', '.workflow/.trash/knowledge-audit-1/x.md'];
    const shared = ['.maestro/config.json', '.maestro/hooks.ts', '.workflow/specs/api.md', '.workflow/knowhow/recipe.md', '.workflow/sessions/s1/session.json'];
    expect(ignored(repo, local).sort()).toEqual([...local].sort());
    expect(ignored(repo, shared)).toEqual([]);

    // Again (--force): nothing is added twice.
    expect((await cli(['init', repo, '--force'])).stdout).not.toContain('to .gitignore');
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe(text);
  }, budget(120_000));
});
