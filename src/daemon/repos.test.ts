import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Project } from '../core/types.js';
import { tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { ABANDONED_WORKTREE_MS, ProjectRepos } from './repos.js';

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

  it('a worktree left half-added (its worker killed in the middle) is forgotten once abandoned, and the fetch goes on', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    const head = halfAddedWorktree(clone);
    const past = new Date(Date.now() - ABANDONED_WORKTREE_MS - 1000);
    utimesSync(head, past, past);
    await expect(repos.prepare(project)).resolves.toBe(clone);
    expect(existsSync(join(clone, '.git', 'worktrees', 'x'))).toBe(false);
    expect(git(clone, 'worktree', 'list')).not.toContain('wt-x');
  });
});
