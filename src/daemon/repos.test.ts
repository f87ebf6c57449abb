import { existsSync, mkdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MaestroError } from '../core/errors.js';
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

describe('ProjectRepos and a remote that does not answer', () => {
  it('says REMOTE_UNREACHABLE once and fails at once (no git) until the retry is due; unready() then tries again in the background', async () => {
    const { project, home } = sharedProject();
    const remote = project.config.remote as string;
    renameSync(remote, `${remote}.away`);
    const heard: (string | null)[] = [];
    let retryDue = false;
    const repos = new ProjectRepos(home, { retryMs: 60_000, onReachability: (_p, err) => heard.push(err ? err.code : null) });
    const first = await repos.prepare(project).catch((e: MaestroError) => e);
    expect(first).toMatchObject({ code: 'REMOTE_UNREACHABLE', message: expect.stringContaining(`The shared remote ${remote} of project repos cannot be reached`) });
    expect(existsSync(join(home, 'clones', project.id))).toBe(false);
    renameSync(`${remote}.away`, remote);
    // Back, but not tried before its retry is due: the same error, without a git process.
    expect(repos.mayTry(project.id)).toBe(false);
    expect(await repos.prepare(project).catch((e: unknown) => e)).toBe(first);
    expect(heard).toEqual(['REMOTE_UNREACHABLE']);
    // unready() starts the retry in the background once due, and tells when the project may be claimed from.
    const due = new ProjectRepos(home, { retryMs: 0, onReachability: (_p, err) => heard.push(err ? err.code : null) });
    const errors: Error[] = [];
    expect(due.unready([project], () => (retryDue = true), (err) => errors.push(err))).toEqual(new Set([project.id]));
    await due.idle();
    expect({ retryDue, errors }).toEqual({ retryDue: true, errors: [] });
    expect(due.unready([project], () => undefined, () => undefined)).toEqual(new Set());
    expect(git(join(home, 'clones', project.id), 'rev-parse', 'HEAD')).toBe(git(remote, 'rev-parse', 'main'));
  });

  it('a clone cut short (left as .partial by a kill) is cleared and made again whole', async () => {
    const { project, home } = sharedProject();
    mkdirSync(join(home, 'clones', `${project.id}.partial`, '.git'), { recursive: true });
    writeFileSync(join(home, 'clones', `${project.id}.partial`, '.git', 'HEAD'), 'garbage');
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    expect(git(clone, 'status', '--porcelain')).toBe('');
    expect(existsSync(`${clone}.partial`)).toBe(false);
  });
});
