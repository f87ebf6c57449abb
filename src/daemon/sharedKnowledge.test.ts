/**
 * promoteOnRemote on real git and a real SQLite store: what a promotion wrote lands on the remote's main
 * in one commit, and a promotion that fails halfway (here: it writes, then throws, as a lock timeout or a
 * full disk would leave it) is undone whole: the clone's main is the remote's, the file it made is gone,
 * the session's receipts are as they were, and the merge lease is free. Undoing one writes back only what it
 * changed, and reads nothing through a `.workflow` the remote links out of the clone: a receipt outside is untouched.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MaestroError } from '../core/errors.js';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { bareRemote, git, makeRepo } from '../../test/helpers/repo.js';
import { resolveWorkflowRoot } from '../knowledge/format/root.js';
import { createLifecycleContext } from '../knowledge/lifecycle/context.js';
import { promote } from '../knowledge/lifecycle/promote/promote.js';
import { ProjectRepos } from './repos.js';
import { foreignSteeringChanges, recordedMerges } from './remoteSteering.js';
import { promoteOnRemote } from './sharedKnowledge.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

/** `remote`: a remote of the test's own (one whose main holds links); default, a plain one. */
async function setup(remote = bareRemote(tempDir('maestro-remote-'))) {
  store = createStore((await freshSqlite()).db);
  const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
  const home = tempDir('maestro-home-');
  const deps = { store, repos: new ProjectRepos(home), owner: 'd1', leaseMs: 60_000 };
  return { remote, project, deps, home };
}

/** What a promotion writes: a spec file, and its receipt in the session. */
function writePromotion(clone: string, receipt: string): void {
  mkdirSync(join(clone, '.workflow', 'specs'), { recursive: true });
  writeFileSync(join(clone, '.workflow', 'specs', 'coding-conventions.md'), '<spec-entry title="x">\n\n### x\n\nx\n\n</spec-entry>\n');
  writeFileSync(receipt, '{"promoted":true}\n');
}

describe('promoteOnRemote', () => {
  it('lands what the promotion wrote on the remote main in one commit, never the session files', async () => {
    const { remote, project, deps } = await setup();
    const before = git(remote, 'rev-parse', 'main');
    const done = { promoted: [] };
    const result = await promoteOnRemote(deps, project, 's1', (clone) => {
      mkdirSync(join(clone, '.workflow', 'sessions', 's1'), { recursive: true });
      writePromotion(clone, join(clone, '.workflow', 'sessions', 's1', 'knowledge-promotion.json'));
      return done;
    });
    expect(result).toBe(done);
    expect(git(remote, 'log', '--format=%s', `${before}..main`)).toBe('Knowledge promoted from session s1');
    expect(git(remote, 'show', '--name-only', '--format=', 'main')).toBe('.workflow/specs/coding-conventions.md');
    expect(await store!.db.all(`SELECT * FROM merge_locks`)).toEqual([]);
    // Recorded as what briefs quote changing, by a promotion: another daemon's sync knows the commit for Maestro's.
    const sha = git(remote, 'rev-parse', 'main');
    const events = (await store!.events.list({ type: 'project.settings_files' })).events;
    expect(events).toEqual([expect.objectContaining({ projectId: project.id, payload: expect.objectContaining({ files: ['.workflow/specs/coding-conventions.md'], sha, promotion: true }) })]);
    expect(await foreignSteeringChanges(remote, { from: before, to: sha }, recordedMerges(store!, project.id))).toEqual([]);
    expect(await foreignSteeringChanges(remote, { from: before, to: sha }, async () => new Map())).toHaveLength(1);
  });

  it('a promotion that fails halfway is undone whole: main, the file it made, the receipts', async () => {
    const { remote, project, deps } = await setup();
    const clone = await deps.repos.prepare(project);
    const session = join(clone, '.workflow', 'sessions', 's1');
    mkdirSync(session, { recursive: true });
    const ledger = join(session, 'knowledge-delta.json');
    writeFileSync(ledger, '{"candidates":["pending"]}\n');
    const before = git(remote, 'rev-parse', 'main');
    const failed = await promoteOnRemote(deps, project, 's1', (at) => {
      writePromotion(at, join(session, 'knowledge-promotion.json'));
      writeFileSync(ledger, '{"candidates":["promoted"]}\n');
      throw new MaestroError('LOCK_TIMEOUT', 'the corpus lock was held too long');
    }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'LOCK_TIMEOUT', message: 'Nothing was promoted: the corpus lock was held too long' });
    expect(git(remote, 'rev-parse', 'main')).toBe(before);
    expect(git(clone, 'rev-parse', 'main')).toBe(before);
    expect(existsSync(join(clone, '.workflow', 'specs', 'coding-conventions.md'))).toBe(false);
    expect(existsSync(join(session, 'knowledge-promotion.json'))).toBe(false);
    expect(readFileSync(ledger, 'utf8')).toBe('{"candidates":["pending"]}\n');
    expect(await store!.db.all(`SELECT * FROM merge_locks`)).toEqual([]);
  });

  /** A remote whose main holds `link` as a symbolic link to `victim`, a folder outside every clone: what a repository can commit. */
  function linkedRemote(link: string, victim: string): string {
    const repo = makeRepo({ 'README.md': '# shared\n' });
    mkdirSync(join(repo, link, '..'), { recursive: true });
    symlinkSync(victim, join(repo, link));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a link out');
    const remote = join(tempDir('maestro-remote-'), 'remote.git');
    git(repo, 'clone', '-q', '--bare', repo, remote);
    return remote;
  }

  /** Receipts written in `dir`, and a look at them (inode and text) to tell whether they were written again. */
  function receipts(dir: string, names: string[]) {
    mkdirSync(dir, { recursive: true });
    for (const n of names) writeFileSync(join(dir, n), '{"mine":true}\n');
    return () => names.map((n) => [n, statSync(join(dir, n)).ino, readFileSync(join(dir, n), 'utf8')]);
  }

  it('a promotion refused for a .workflow linked out of the clone touches nothing there when it is undone', async () => {
    const victim = tempDir('maestro-victim-');
    const session = join(victim, 'sessions', 's1');
    const look = receipts(session, ['knowledge-delta.json', 'knowledge-reconciliation.json']);
    const before = look();
    const { project, deps, home } = await setup(linkedRemote('.workflow', victim));
    const failed = await promoteOnRemote(deps, project, 's1', (clone) => {
      // Whoever owns the folder writes a file of theirs meanwhile: not the promotion's, so not removed with it.
      writeFileSync(join(session, 'knowledge-theirs.json'), '{}\n');
      const root = resolveWorkflowRoot({ workflowRoot: clone, env: { MAESTRO_HOME: home } });
      return promote(createLifecycleContext({ embedder: null }), root, 's1', { all: true });
    }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(`${join(home, 'clones', project.id, '.workflow')} is a symbolic link leading to ${session}`) });
    expect(look()).toEqual(before);
    expect(readdirSync(session).sort()).toEqual(['knowledge-delta.json', 'knowledge-reconciliation.json', 'knowledge-theirs.json']);
  });

  it('a receipt the promotion did not change is not written again: one in a run folder linked out of the clone is left alone', async () => {
    const victim = tempDir('maestro-victim-');
    const look = receipts(victim, ['knowledge-reconciliation.json']);
    const before = look();
    const { project, deps } = await setup(linkedRemote('.workflow/sessions/s1/runs/r1', victim));
    const failed = await promoteOnRemote(deps, project, 's1', () => {
      throw new MaestroError('PATH_OUTSIDE_PROJECTS', 'run r1 leads out of the project'); // as the promotion refuses it
    }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'PATH_OUTSIDE_PROJECTS' });
    expect(look()).toEqual(before);
  });
});
