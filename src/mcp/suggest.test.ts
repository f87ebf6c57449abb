import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../agents/scripted.js';
import { inferScope, inferTaskType, matchFiles, suggestTaskMetadata } from './suggest.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-suggest-'));
  dirs.push(dir);
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), `// ${f}\n`);
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  execFileSync('git', ['add', '-A'], { cwd: dir });
  return dir;
}

const SHOP = ['src/auth/login.ts', 'src/auth/session.ts', 'src/basket/basket.ts', 'src/basket/basketItem.ts', 'web/pages/LoginPage.tsx', 'docs/setup.md', 'README.md', 'package.json'];

describe('suggest_task_metadata heuristic', () => {
  it('picks the task type from keywords in the title', () => {
    expect(inferTaskType('Fix crash when the basket is empty')).toBe('bugfix');
    expect(inferTaskType('Document the setup in the README')).toBe('docs');
    expect(inferTaskType('Document the setup')).toBe('docs');
    expect(inferTaskType('Refactor session handling')).toBe('refactor');
    expect(inferTaskType('Bump dependencies')).toBe('chore');
    expect(inferTaskType('Add a wish list')).toBe('feature');
  });

  it('matches title words against repository paths, file names first', () => {
    expect(matchFiles('Fix the basket total', SHOP)).toEqual(['src/basket/basket.ts', 'src/basket/basketItem.ts']);
    expect(matchFiles('Add remember-me to login', SHOP)).toEqual(['src/auth/login.ts', 'web/pages/LoginPage.tsx']);
    expect(matchFiles('Add a wish list', SHOP)).toEqual([]);
  });

  it('derives the scope from how many directories the files span', () => {
    expect(inferScope([])).toBeNull();
    expect(inferScope(['src/a.ts'])).toBe('file');
    expect(inferScope(['src/auth/a.ts', 'src/auth/b.ts'])).toBe('module');
    expect(inferScope(['src/auth/a.ts', 'src/basket/b.ts'])).toBe('service');
    expect(inferScope(['src/auth/a.ts', 'web/b.tsx'])).toBe('cross-service');
  });

  it('reads the repository with git ls-files and answers all four fields', async () => {
    const dir = repo(SHOP);
    const out = await suggestTaskMetadata({ title: 'Login fails after session expiry', repoPath: dir });
    expect(out).toEqual({
      taskType: 'bugfix',
      scope: 'cross-service',
      ownedFiles: ['src/auth/login.ts', 'src/auth/session.ts', 'web/pages/LoginPage.tsx'],
      expectedOutput: 'Fixed: Login fails after session expiry. A regression test fails before the fix and passes after it; all checks pass.',
      source: 'heuristic',
    });
  });

  it('refuses a folder that is not a repository', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'maestro-plain-'));
    dirs.push(plain);
    await expect(suggestTaskMetadata({ title: 'x', repoPath: plain })).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY' });
  });
});

describe('suggest_task_metadata through an agent', () => {
  function scripted(dir: string, answer: string): ScriptedProvider {
    const script = join(dir, '.script.json');
    writeFileSync(script, JSON.stringify({ steps: [{ match: { role: 'plan' }, actions: [{ text: answer }] }] }));
    return new ScriptedProvider({ script });
  }

  it("uses the agent's answer when it holds up", async () => {
    const dir = repo(SHOP);
    const answer = JSON.stringify({ taskType: 'feature', scope: 'module', ownedFiles: ['src/basket/basket.ts'], expectedOutput: 'Baskets can be saved.' });
    const out = await suggestTaskMetadata({ title: 'Save baskets', repoPath: dir, provider: scripted(dir, `Here you go:\n${answer}`) });
    expect(out).toEqual({ taskType: 'feature', scope: 'module', ownedFiles: ['src/basket/basket.ts'], expectedOutput: 'Baskets can be saved.', source: 'agent' });
  });

  it('falls back to the heuristic, saying why, when the agent names files that do not exist', async () => {
    const dir = repo(SHOP);
    const answer = JSON.stringify({ taskType: 'feature', scope: 'file', ownedFiles: ['src/nowhere.ts'], expectedOutput: 'x' });
    const out = await suggestTaskMetadata({ title: 'Save baskets', repoPath: dir, provider: scripted(dir, answer) });
    expect(out.source).toBe('heuristic');
    expect(out.ownedFiles).toEqual(['src/basket/basket.ts', 'src/basket/basketItem.ts']);
    expect(out.note).toContain('ownedFiles not in the repository: src/nowhere.ts');
  });
});
