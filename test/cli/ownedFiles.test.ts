/**
 * A task's owned files through `maestro task create` and `task edit` on a real daemon: a path that holds a comma
 * (legal in git) is given whole with --owned-file, the comma list still works for scripts and both combine; a bad
 * path is refused naming the option and the value, changing nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { snapshot } from '../store/contract.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

describe('owned files on the command line', { timeout: budget(240_000) }, () => {
  it('takes a path with a comma whole from --owned-file, after the comma list, at create and at edit', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const created = await cliJson<{ task: Task }>(['task', 'create', 'Docs', '--project', 'shop', '--owned-file', 'docs/a,b.md', '--owned-files', 'src/a.ts, src/b.ts', '--owned-file', ' lead.txt', ...url]);
      expect([created.code, created.stderr]).toEqual([0, '']);
      expect(created.body.task.ownedFiles).toEqual(['src/a.ts', 'src/b.ts', 'docs/a,b.md', ' lead.txt']);

      const id = created.body.task.id;
      const edited = await cli(['task', 'edit', id, '--owned-file', 'x,y.ts', ...url]);
      expect([edited.code, edited.stderr, edited.stdout]).toEqual([0, '', `Edited ${id} (ready):\n  owned files: src/a.ts, src/b.ts, docs/a,b.md,  lead.txt → x,y.ts\n`]);
      // The comma list as scripts give it, repeated now: each adds its paths.
      expect((await cli(['task', 'edit', id, '--owned-files', 'a.ts,b.ts', '--owned-files', 'c.ts', ...url])).code).toBe(0);
      expect((await d.store.tasks.get(id)).ownedFiles).toEqual(['a.ts', 'b.ts', 'c.ts']);
      expect((await d.store.tasks.list({ projectId: p.id })).length).toBe(1);
    } finally {
      await d.stop();
    }
  });

  it('refuses an empty path, a line break, a path out of the repository, an empty list and --no-owned-files with --owned-file, naming each, and changes nothing', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const t = await d.store.tasks.create({ projectId: p.id, title: 'Cart', ownedFiles: ['src/'] });
      const before = await snapshot(d.store.db);
      const refusals: Array<[string[], string]> = [
        [['--owned-file', ''], "option '--owned-file <path>' argument '' is invalid. It is empty: give a value, or leave the option out."],
        [['--owned-file', 'a\nb.ts'], "option '--owned-file <path>' argument 'a\nb.ts' is invalid. The path must not contain control characters (NUL, line breaks, tabs)."],
        [['--owned-files', 'src/a.ts,../b.ts'], `option '--owned-files <paths>' argument 'src/a.ts,../b.ts' is invalid. The path "../b.ts" must be a path inside the repository (relative, no "..").`],
        [['--owned-files', ' , '], "option '--owned-files <paths>' argument ' , ' is invalid. It names no path (to clear the list, task edit takes --no-owned-files)."],
        [['--no-owned-files', '--owned-file', 'a.ts'], '--no-owned-files clears the owned files and --owned-file sets them: give one or the other.'],
      ];
      for (const [options, message] of refusals) {
        const edit = await cli(['task', 'edit', t.id, ...options, ...url, '--json']);
        expect([edit.code, edit.stderr], options.join(' ')).toEqual([2, '']);
        expect(JSON.parse(edit.stdout).error, options.join(' ')).toEqual({ code: 'BAD_INPUT', message });
      }
      const create = await cli(['task', 'create', 'New', '--project', 'shop', '--owned-file', '/etc/passwd', ...url]);
      expect([create.code, create.stdout]).toEqual([2, '']);
      expect(create.stderr).toContain("option '--owned-file <path>' argument '/etc/passwd' is invalid. The path must be a path inside the repository");
      expect(await snapshot(d.store.db)).toEqual(before);
    } finally {
      await d.stop();
    }
  });
});
