/**
 * A part of the board fetched when first opened (Settings, Knowledge, Metrics, Observer, a task's review panel)
 * whose file does not arrive: the daemon stopped, or restarted with a new build whose file names changed. The
 * page said nothing and went blank, the sidebar and the board included, until it was reloaded; it says so where
 * the part would be, the rest of the board goes on working, and Reload fetches it again.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/db.js';
import { startTestDaemon, taskReaches } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const skip = browserSkipReason();

const SCRIPT = `steps:
  - match: { role: execute }
    actions:
      - write: { path: notes.txt, content: "a\\nb\\nc\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

describe.skipIf(skip !== null)('a screen whose file cannot be fetched, in Chromium', () => {
  const browser = withBrowser();

  it('says the screen could not be loaded, keeps the board, and Reload brings it', async () => {
    const repo = makeRepo({ 'notes.txt': 'a\nb\n' });
    const script = join(tempDir('maestro-script-'), 'load.yaml');
    writeFileSync(script, SCRIPT);
    const daemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const project = await daemon.store.projects.create({ name: 'load', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
      const task = await daemon.store.tasks.create({ projectId: project.id, title: 'Tidy the notes', complexity: 'easy' });
      daemon.orchestrator.kick();
      await taskReaches(daemon, task.id, 'exec_review', budget(120_000));

      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      // The lazily loaded files refuse to arrive, as when the daemon is down.
      let refuse = true;
      await page.route(/\/assets\/(SettingsScreen|ReviewPanel)-[^/]+\.js$/, (route) => (refuse ? route.abort('connectionrefused') : route.continue()));
      await page.goto(daemon.boardUrl);
      await page.getByText('Tidy the notes').first().waitFor();

      await page.getByRole('link', { name: 'Settings' }).click();
      const failed = page.getByRole('alert').filter({ hasText: 'This part of the board could not be loaded' });
      await failed.waitFor();
      // The shell is still there: the board can be reached again without a reload.
      await page.getByRole('link', { name: 'Board' }).click();
      await page.getByText('Tidy the notes').first().click();
      // The task's detail shows, its review panel says it could not be loaded; the gate's buttons are still there.
      await page.getByRole('alert').filter({ hasText: 'This part of the board could not be loaded' }).waitFor();
      await page.getByRole('button', { name: 'Reject' }).waitFor();
      expect(await page.getByRole('heading', { name: 'Tidy the notes' }).count()).toBe(1);

      // The daemon answers again: Reload fetches the page and its files anew.
      refuse = false;
      await page.getByRole('button', { name: 'Reload' }).click();
      await page.getByTestId('diff-viewer').waitFor({ timeout: budget(30_000) });
      expect(await page.getByText('This part of the board could not be loaded').count()).toBe(0);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(180_000));
});
