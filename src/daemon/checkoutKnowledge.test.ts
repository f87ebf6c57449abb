/**
 * promoteInCheckout on real git and a real SQLite store: what a promotion writes in a project's own checkout is
 * committed alone, and the person's own work there is never committed nor changed: a knowledge file they were
 * editing stays uncommitted (and the answer says so), their staged files stay staged, and a checkout on another
 * branch gets the files written, not committed.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { promoteInCheckout } from './checkoutKnowledge.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

const SPEC = '<spec-entry category="coding" keywords="x" date="2026-01-01" sid="S-20260101-aaaa" title="A">\n\n### A\n\na\n\n</spec-entry>\n';
const ENTRY = '\n<spec-entry category="coding" keywords="y" date="2026-12-07" sid="S-20261207-bbbb" title="B">\n\n### B\n\nb\n\n</spec-entry>\n';

async function setup() {
  store = createStore((await freshSqlite()).db);
  const repo = makeRepo({ 'README.md': '# r\n', '.workflow/specs/coding-conventions.md': SPEC });
  const project = await store.projects.create({ name: 'own', repoPath: repo });
  const deps = { store, owner: 'd1', leaseMs: 60_000 };
  return { repo, project, deps };
}

/** A promotion of one entry into the coding spec and one new knowhow file. */
function promoteInto(repo: string) {
  appendFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), ENTRY);
  mkdirSync(join(repo, '.workflow', 'knowhow'), { recursive: true });
  writeFileSync(join(repo, '.workflow', 'knowhow', 'K-20261207-cccc.md'), '# C\n');
  return { promoted: [{ promoted_id: 'S-20261207-bbbb' }, { promoted_id: 'K-20261207-cccc' }] };
}

describe('promoteInCheckout', () => {
  it("commits only the knowledge files the promotion wrote, keeping the person's staged and untracked files as they were", async () => {
    const { repo, project, deps } = await setup();
    writeFileSync(join(repo, 'README.md'), '# r\nstaged by the person\n');
    git(repo, 'add', 'README.md');
    writeFileSync(join(repo, 'scratch.txt'), 'mine\n');
    const before = git(repo, 'rev-parse', 'main');
    const result = await promoteInCheckout(deps, project, 'task-t-0123456789abcdef', promoteInto);
    expect(git(repo, 'log', '--format=%an: %s', `${before}..main`)).toBe('Maestro: Knowledge promoted from session task-t-0123456789abcdef: S-20261207-bbbb, K-20261207-cccc');
    expect(git(repo, 'show', '--name-only', '--format=', 'main').split('\n').sort()).toEqual(['.workflow/knowhow/K-20261207-cccc.md', '.workflow/specs/coding-conventions.md']);
    expect(result.commit).toEqual({ sha: git(repo, 'rev-parse', 'main'), files: ['.workflow/knowhow/K-20261207-cccc.md', '.workflow/specs/coding-conventions.md'].sort(), uncommitted: [], why: null });
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('M  README.md\n?? scratch.txt');
    expect(await store!.db.all(`SELECT * FROM merge_locks`)).toEqual([]);
  });

  it('leaves out of the commit a knowledge file the person was editing, and says so', async () => {
    const { repo, project, deps } = await setup();
    appendFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), '\nmy own unfinished line\n');
    const before = git(repo, 'rev-parse', 'main');
    const result = await promoteInCheckout(deps, project, 's1', promoteInto);
    expect(git(repo, 'show', '--name-only', '--format=', 'main')).toBe('.workflow/knowhow/K-20261207-cccc.md');
    expect(git(repo, 'rev-list', '--count', `${before}..main`)).toBe('1');
    expect(result.commit).toEqual({ sha: git(repo, 'rev-parse', 'main'), files: ['.workflow/knowhow/K-20261207-cccc.md'], uncommitted: ['.workflow/specs/coding-conventions.md'], why: 'they had uncommitted changes of yours before the promotion' });
    // Their line and the promoted entry are both there, uncommitted.
    const spec = readFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), 'utf8');
    expect(spec).toContain('my own unfinished line');
    expect(spec).toContain('S-20261207-bbbb');
    expect(git(repo, 'status', '--porcelain')).toBe('M .workflow/specs/coding-conventions.md');
  });

  it('commits nothing in a checkout on another branch than the base, and says why', async () => {
    const { repo, project, deps } = await setup();
    git(repo, 'checkout', '-q', '-b', 'feature');
    const result = await promoteInCheckout(deps, project, 's1', promoteInto);
    expect(git(repo, 'rev-list', '--count', 'main..feature')).toBe('0');
    expect(result.commit).toEqual({ sha: null, files: [], uncommitted: ['.workflow/knowhow/K-20261207-cccc.md', '.workflow/specs/coding-conventions.md'], why: 'the checkout is on feature, not main: they would be committed there' });
  });
});
