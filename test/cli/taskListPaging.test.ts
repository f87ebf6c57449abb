/**
 * `maestro task list` showed the API's first 500 tasks as if they were all (a trial: 1,234 tasks, 500 rows,
 * no word). The table now says on stderr how many of how many it shows and how to see the rest; --json
 * carries total and nextOffset, --offset / --limit page, --all reads every page; a bad --limit or --offset
 * is refused naming the flag.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

type Listed = { tasks: Task[]; total: number | null; nextOffset: number | null };

describe('maestro task list: more tasks than a page', { timeout: budget(180_000) }, () => {
  it('says there are more, pages with --offset / --limit, and reads them all with --all', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      for (let i = 0; i < 520; i++) await d.store.tasks.create({ projectId: p.id, title: `Task ${i}` });

      const first = await cli(['task', 'list', ...url]);
      expect(first.code).toBe(0);
      expect(first.stdout.trim().split('\n')).toHaveLength(501); // the heading and 500 rows
      expect(first.stderr).toContain('500 of 520 shown; --offset 500 for the next page');
      expect(first.stdout).not.toContain('shown');

      const json = await cliJson<Listed>(['task', 'list', ...url]);
      expect(json.body.tasks).toHaveLength(500);
      expect(json.body).toMatchObject({ total: 520, nextOffset: 500 });
      expect(json.stderr).toBe('');

      const rest = await cliJson<Listed>(['task', 'list', '--offset', '500', ...url]);
      expect(rest.body.tasks).toHaveLength(20);
      expect(new Set([...json.body.tasks, ...rest.body.tasks].map((t) => t.id)).size).toBe(520);
      expect(rest.body).toMatchObject({ total: 520, nextOffset: null });
      const restText = await cli(['task', 'list', '--offset', '500', ...url]);
      expect(restText.stderr).toBe('');

      const small = await cli(['task', 'list', '--limit', '10', '--offset', '5', ...url]);
      expect(small.stdout.trim().split('\n')).toHaveLength(11);
      expect(small.stderr).toContain('6–15 of 520 shown; --offset 15');

      const all = await cliJson<Listed>(['task', 'list', '--all', ...url]);
      expect(all.body.tasks).toHaveLength(520);
      expect(new Set(all.body.tasks.map((t) => t.id)).size).toBe(520);
      expect(all.body).toMatchObject({ total: 520, nextOffset: null });

      const narrowed = await cliJson<Listed>(['task', 'list', '--status', 'done', ...url]);
      expect(narrowed.body).toEqual({ tasks: [], total: 0, nextOffset: null });

      for (const [flag, value] of [['--limit', '-1'], ['--limit', '0'], ['--limit', '2.5'], ['--limit', '5001'], ['--offset', '-3'], ['--offset', 'ten']] as const) {
        const refused = await cli(['task', 'list', flag, value, ...url]);
        expect(refused.code, `${flag} ${value}`).toBe(2);
        expect(refused.stderr).toContain(flag);
        expect(refused.stderr).toContain('a whole number');
      }
      expect((await cli(['task', 'list', '--all', '--offset', '3', ...url])).code).toBe(2);
    } finally {
      await d.stop();
    }
  });
});
