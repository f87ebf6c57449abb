/**
 * The daemons on the board, in Chromium against a real daemon (SQLite): alone, the board says nothing of daemons (no
 * link, no column in a task's runs). Once another daemon shares the database and ran one of the task's runs, the
 * sidebar links the Daemons screen, which lists both (host, runs in flight, the setting that differs, a name
 * written with a terminal escape shown, not run), and the task's runs name the daemon of each.
 */
import { describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { budget } from '../helpers/budget.js';
import type { DaemonList } from '../../src/api/wire/daemons.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';

const skip = browserSkipReason();

describe.skipIf(skip !== null)('the daemons on the board, in Chromium', () => {
  const browser = withBrowser();

  it('says nothing of daemons alone; with another on the database, lists them and names the daemon of each run', { timeout: budget(180_000) }, async () => {
    const daemon = await startTestDaemon({ name: 'laptop' }, { noOrchestrator: true, plugins: BOARD_PLUGINS });
    try {
      const project = await daemon.store.projects.create({ name: 'shared', repoPath: makeRepo() });
      const task = await daemon.store.tasks.create({ projectId: project.id, title: 'Greet the team', complexity: 'easy' });
      const mine = await daemon.store.runs.create({ taskId: task.id, kind: 'plan', model: null, traceId: 'tr-1', attempt: 1, owner: 'laptop' });
      await daemon.store.runs.finish({ id: mine.id, status: 'succeeded' });

      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(daemon.boardUrl);
      await page.getByText('Greet the team').first().click();
      const runs = page.getByTestId('runs');
      await runs.waitFor();
      expect(await runs.getByRole('columnheader').allTextContents()).not.toContain('Daemon');
      expect(await page.getByRole('link', { name: 'Daemons' }).count()).toBe(0);

      // Another host's daemon joins the database (its lease 4 s against 60 s) and runs the task's execute.
      const { settings } = (await (await daemon.fetch('/api/daemons')).json()) as DaemonList;
      const now = daemon.store.clock();
      await daemon.store.db.run(`INSERT INTO daemons (name, host, pid, home, started_at, heartbeat_at, settings) VALUES ($1, 'ci-host', 42, '/srv/maestro', $2, $2, $3)`, ['build-1\u001b[2J', now, JSON.stringify({ ...settings, leaseMs: 4000 })]);
      await daemon.store.runs.create({ taskId: task.id, kind: 'execute', model: null, traceId: 'tr-1', attempt: 1, owner: 'build-1\u001b[2J' });

      await page.reload();
      await page.getByRole('link', { name: 'Daemons' }).click();
      const table = page.getByTestId('daemons');
      await table.waitFor();
      const rows = await table.getByRole('row').allTextContents();
      expect(rows).toHaveLength(3);
      expect(rows[1]).toMatch(/^build-1\\u\{1b\}\[2Jlive ?ci-host0\.1\.0\d+ s ago1/);
      expect(rows[2]).toMatch(/^laptop this onelive/);
      await page.getByText('build-1\\u{1b}[2J: differs from laptop: leaseMs 4 s (laptop: 60 s).').waitFor();

      await page.goto(`${daemon.url}/#/task/${task.id}`);
      await runs.waitFor();
      await runs.getByRole('columnheader', { name: 'Daemon' }).waitFor();
      const cells = await Promise.all([1, 2].map((i) => runs.getByRole('row').nth(i).getByRole('cell').last().textContent()));
      expect(cells.sort()).toEqual(['build-1\\u{1b}[2J', 'laptop']);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  });
});
