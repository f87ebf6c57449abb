/**
 * `maestro knowledge promote` in a project's own checkout commits what it wrote, as a promotion on the board does
 * (daemon/checkoutKnowledge.ts): left uncommitted, a changed spec file made the checkout dirty and Maestro refused
 * to merge the task being reviewed. With a daemon whose project the folder is, the daemon promotes under the
 * project's merge lease; with none, the CLI commits itself. Only the promoted files, never the person's own work; a
 * checkout on another branch gets the files and no commit; the output says what was committed or why not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { takeMergeLease } from '../../src/store/ops/daemons.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { maestro, rootAt, SPEC_FILE } from '../helpers/knowledge2.js';

let daemon: TestDaemon | null = null;
afterEach(async () => {
  await daemon?.stop({ graceMs: 2000 });
  daemon = null;
  removeTempDirs();
});

const TASK = 't_0a1b2c3d4e5f6071';
const SID = sessionIdFor(TASK);

/** A checkout with the coding spec committed, the person's own work in it, and one candidate staged and reviewed. */
async function checkout(env: NodeJS.ProcessEnv) {
  const repo = makeRepo({ 'README.md': '# r\n', '.workflow/specs/coding-conventions.md': SPEC_FILE });
  const root = rootAt(repo);
  createSession(root, SID, 'Add sub');
  const c = stage(root, { target: 'spec', title: 'Use strict equality in tests', content: 'Tests compare with strictEqual.', category: 'coding', session: SID, evidence: [] }, process.env).candidate;
  writeFileSync(join(repo, 'README.md'), '# r\nstaged by the person\n');
  git(repo, 'add', 'README.md');
  writeFileSync(join(repo, 'notes.txt'), 'mine\n');
  const reviewed = await maestro(['knowledge', 'review', TASK, '--refresh', '--workflow-root', repo], env);
  expect(reviewed.code, reviewed.stderr).toBe(0);
  return { repo, root, candidate: c.candidate_id, before: git(repo, 'rev-parse', 'main') };
}

function expectPromotedCommit(repo: string, before: string, stdout: string, subject: RegExp) {
  expect(git(repo, 'rev-list', '--count', `${before}..main`)).toBe('1');
  expect(git(repo, 'log', '-1', '--format=%s', 'main')).toMatch(subject);
  expect(git(repo, 'show', '--name-only', '--format=', 'main')).toBe('.workflow/specs/coding-conventions.md');
  expect(git(repo, 'show', 'main:.workflow/specs/coding-conventions.md')).toContain('Use strict equality in tests');
  expect(stdout).toContain(`Committed in ${repo} (${git(repo, 'rev-parse', 'main').slice(0, 12)}): .workflow/specs/coding-conventions.md\n`);
  // The person's staged and untracked files are as they were.
  expect(git(repo, 'status', '--porcelain', '--untracked-files=all', '--', 'README.md', 'notes.txt', '.workflow/specs', '.workflow/knowhow')).toBe('M  README.md\n?? notes.txt');
}

describe('maestro knowledge promote in a project\'s own checkout', { timeout: budget(120_000) }, () => {
  it('with no daemon running: commits the promoted spec file alone, and says so', async () => {
    const env = { MAESTRO_HOME: tempDir('maestro-home-'), MAESTRO_URL: 'http://127.0.0.1:4551' };
    const { repo, candidate, before } = await checkout(env);
    const r = await maestro(['knowledge', 'promote', TASK, '--candidate', candidate, '--workflow-root', repo], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expectPromotedCommit(repo, before, r.stdout, new RegExp(`^Knowledge promoted from session ${SID}: S-\\S+$`));
  });

  it("with no daemon, in a project whose base is trunk: commits on trunk, as the daemon's database records the project", async () => {
    const home = tempDir('maestro-home-');
    const env = { MAESTRO_HOME: home, MAESTRO_URL: 'http://127.0.0.1:4551' };
    const { repo, candidate } = await checkout(env);
    git(repo, 'branch', '-m', 'main', 'trunk');
    // Registered while a daemon ran (a repository with no main: its project's base is the branch it is on), then stopped.
    const d = await startTestDaemon({ home, tickMs: 100 });
    const registered = await d.app.inject({ method: 'POST', url: '/api/projects', payload: { name: 'trunked', repoPath: repo } });
    expect(registered.statusCode, registered.body).toBe(201);
    expect(registered.json().project.config.baseBranch).toBe('trunk');
    await d.stop({ graceMs: 0 });
    const before = git(repo, 'rev-parse', 'trunk');
    const r = await maestro(['knowledge', 'promote', TASK, '--candidate', candidate, '--workflow-root', repo], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(git(repo, 'rev-list', '--count', `${before}..trunk`)).toBe('1');
    expect(git(repo, 'show', '--name-only', '--format=', 'trunk')).toBe('.workflow/specs/coding-conventions.md');
    expect(r.stdout).toContain(`Committed in ${repo} (${git(repo, 'rev-parse', 'trunk').slice(0, 12)}): .workflow/specs/coding-conventions.md\n`);
  });

  it('with no daemon, in a checkout on another branch: the files are written, not committed, and why', async () => {
    const env = { MAESTRO_HOME: tempDir('maestro-home-'), MAESTRO_URL: 'http://127.0.0.1:4551' };
    const { repo, candidate } = await checkout(env);
    git(repo, 'checkout', '-q', '-b', 'feature');
    const head = git(repo, 'rev-parse', 'HEAD');
    const r = await maestro(['knowledge', 'promote', TASK, '--candidate', candidate, '--workflow-root', repo], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(readFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toContain('Use strict equality in tests');
    expect(r.stdout).toContain('Not committed: .workflow/specs/coding-conventions.md: the checkout is on feature, not main: they would be committed there; commit them yourself');
  });

  it("with the project's daemon running: the daemon promotes under the project's merge lease and commits", async () => {
    daemon = await startTestDaemon({ tickMs: 100 });
    const env = { MAESTRO_HOME: daemon.config.home, MAESTRO_URL: '' };
    const { repo, candidate, before } = await checkout(env);
    const project = await daemon.store.projects.create({ name: 'own', repoPath: repo });
    // A merge into the checkout under way (another holder of the lease): nothing is promoted, and the CLI says why.
    expect(await takeMergeLease(daemon.store.db, { projectId: project.id, owner: 'someone-merging', now: daemon.store.clock(), leaseMs: 60_000 })).toBe(true);
    const busy = await maestro(['knowledge', 'promote', TASK, '--candidate', candidate, '--workflow-root', repo], env);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('A merge into main of project own is under way; nothing was promoted.');
    expect(readFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toBe(SPEC_FILE);
    await daemon.store.db.run(`DELETE FROM merge_locks`);

    const r = await maestro(['knowledge', 'promote', TASK, '--candidate', candidate, '--workflow-root', repo], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expectPromotedCommit(repo, before, r.stdout, new RegExp(`^Knowledge promoted from session ${SID}: S-\\S+$`));
  });

  it('with a daemon that refuses the token: the files are written, nothing is committed, and why', async () => {
    daemon = await startTestDaemon({ tickMs: 100 });
    const env = { MAESTRO_HOME: daemon.config.home, MAESTRO_URL: '', MAESTRO_TOKEN: 'not-the-token' };
    const { repo, candidate, before } = await checkout({ ...env, MAESTRO_TOKEN: '' });
    await daemon.store.projects.create({ name: 'own', repoPath: repo });
    const r = await maestro(['knowledge', 'promote', TASK, '--candidate', candidate, '--workflow-root', repo], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(git(repo, 'rev-parse', 'main')).toBe(before);
    expect(readFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toContain('Use strict equality in tests');
    expect(r.stdout).toMatch(/\nwarning: nothing committed: the daemon did not say which projects it has \(.+\)\nWritten to .+, not committed: commit the new files there/);
  });
});
