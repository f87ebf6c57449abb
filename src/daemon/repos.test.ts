import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Project } from '../core/types.js';
import { tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { ProjectRepos } from './repos.js';

function sharedProject(): { project: Project; home: string } {
  const work = makeRepo();
  const remote = join(tempDir('maestro-remote-'), 'remote.git');
  git(work, 'clone', '-q', '--bare', work, remote);
  const project: Project = { id: 'p_repos', name: 'repos', repoPath: work, config: { remote }, createdAt: 0, updatedAt: 0 };
  return { project, home: tempDir('maestro-home-') };
}

/** What `git worktree add` leaves for an instant: a worktree whose HEAD is still the null id. */
function halfAddedWorktree(clone: string): string {
  const admin = join(clone, '.git', 'worktrees', 'x');
  mkdirSync(admin, { recursive: true });
  writeFileSync(join(admin, 'HEAD'), `${'0'.repeat(40)}\n`);
  writeFileSync(join(admin, 'gitdir'), `${join(clone, '..', 'wt-x', '.git')}\n`);
  writeFileSync(join(admin, 'commondir'), '../..\n');
  return join(admin, 'HEAD');
}

describe('ProjectRepos on a shared remote', () => {
  it('a fetch that meets a worktree being added by a worker is tried again once the worktree is there', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    const head = halfAddedWorktree(clone);
    const sha = git(clone, 'rev-parse', 'HEAD');
    setTimeout(() => writeFileSync(head, `${sha}\n`), 150); // the worker's `git worktree add` finishes
    await expect(repos.prepare(project)).resolves.toBe(clone);
  });

  it('a worktree that stays broken fails the fetch with git\'s own message', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    halfAddedWorktree(clone);
    await expect(repos.prepare(project)).rejects.toThrow(/bad object worktrees\/x\/HEAD/);
  });
});
