import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertInRepo, linkOutOfRepo } from './repoWrites.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(prefix: string): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(d);
  return d;
}

describe('linkOutOfRepo', () => {
  it('names the first link below the repository that leads out of it, and where the path lands', () => {
    const repo = dir('maestro-repo-');
    const outside = dir('maestro-outside-');
    symlinkSync(outside, join(repo, '.workflow'));
    expect(linkOutOfRepo(repo, join(repo, '.workflow', 'sessions', 's-1'))).toEqual({ link: join(repo, '.workflow'), leadsTo: join(outside, 'sessions', 's-1') });
    // Deeper: the folder is real, the link is below it.
    const other = dir('maestro-repo-');
    mkdirSync(join(other, '.workflow'));
    symlinkSync(outside, join(other, '.workflow', 'sessions'));
    expect(linkOutOfRepo(other, join(other, '.workflow', 'sessions', 'x'))?.link).toBe(join(other, '.workflow', 'sessions'));
  });

  it('follows links that stay inside, and finds one that leads out through them', () => {
    const repo = dir('maestro-repo-');
    const outside = dir('maestro-outside-');
    mkdirSync(join(repo, 'docs', 'wf'), { recursive: true });
    symlinkSync('docs/wf', join(repo, '.workflow'));
    expect(linkOutOfRepo(repo, join(repo, '.workflow', 'sessions'))).toBeNull();
    symlinkSync(outside, join(repo, 'docs', 'wf', 'sessions'));
    expect(linkOutOfRepo(repo, join(repo, '.workflow', 'sessions', 's-1'))).toEqual({ link: join(repo, '.workflow', 'sessions'), leadsTo: join(outside, 's-1') });
    // A link to a link out is out too.
    symlinkSync('.workflow/sessions', join(repo, 'chain'));
    expect(linkOutOfRepo(repo, join(repo, 'chain'))?.link).toBe(join(repo, 'chain'));
  });

  it('judges a link to a missing place by the place it names', () => {
    const repo = dir('maestro-repo-');
    const outside = dir('maestro-outside-');
    symlinkSync(join(outside, 'rcfile'), join(repo, '.gitignore'));
    expect(linkOutOfRepo(repo, join(repo, '.gitignore'))).toEqual({ link: join(repo, '.gitignore'), leadsTo: join(outside, 'rcfile') });
    symlinkSync('config/gitignore', join(repo, 'ignore-inside'));
    expect(linkOutOfRepo(repo, join(repo, 'ignore-inside'))).toBeNull();
  });

  it('passes a path nothing of which exists yet, or that a file is in the way of', () => {
    const repo = dir('maestro-repo-');
    expect(linkOutOfRepo(repo, join(repo, '.maestro', 'config.json'))).toBeNull();
    writeFileSync(join(repo, '.maestro'), 'a file\n');
    expect(linkOutOfRepo(repo, join(repo, '.maestro', 'config.json'))).toBeNull();
    expect(() => linkOutOfRepo(repo, join(repo, '..', 'x'))).toThrow(/is not a path inside/);
  });
});

describe('assertInRepo', () => {
  it('refuses with PATH_OUTSIDE_PROJECTS, naming the file, the link and where the file would land', () => {
    const repo = dir('maestro-repo-');
    const outside = dir('maestro-outside-');
    symlinkSync(outside, join(repo, '.workflow'));
    const target = join(repo, '.workflow', '.maestro-corpus.lock');
    expect(() => assertInRepo(repo, join(repo, '.workflow'), { target })).toThrow(
      expect.objectContaining({
        code: 'PATH_OUTSIDE_PROJECTS',
        message: `Refusing to write ${target}: ${join(repo, '.workflow')} is a symbolic link leading to ${join(outside, '.maestro-corpus.lock')}, outside the repository ${repo}. What Maestro writes in a checkout stays inside it. Nothing was written. Replace the link with a real folder or file inside the repository, or remove it.`,
      }),
    );
    expect(() => assertInRepo(repo, target, { use: 'read' })).toThrow(/^Refusing to read .*Nothing was read or written\./);
    expect(() => assertInRepo(repo, join(repo, 'src'))).not.toThrow();
  });
});
