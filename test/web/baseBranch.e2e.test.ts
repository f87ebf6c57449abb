/**
 * A project whose base branch is not main, in headless Chromium against a real daemon, repository and scripted
 * agent: the merge confirmation at exec_review names the branch an approval merges into (the task detail's
 * baseBranch), and the approval merges there.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const skip = browserSkipReason();

const SCRIPT = `steps:
  - match: { role: execute }
    actions:
      - write: { path: notes.txt, content: "a\\nb\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

describe.skipIf(skip !== null)('a project whose base branch is not main, in Chromium', () => {
  const browser = withBrowser();
  let page: Page;

  beforeAll(async () => {
    page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err.message));
  });

  it('names the base branch in the merge confirmation, and the approval merges into it', async () => {
    const repo = makeRepo({ 'notes.txt': 'a\n' });
    git(repo, 'branch', '-m', 'main', 'trunk');
    const script = join(tempDir('maestro-script-'), 'base.yaml');
    writeFileSync(script, SCRIPT);
    const daemon: TestDaemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const { store, bus } = daemon;
      const project = await store.projects.create({ name: 'trunked', repoPath: repo, config: { baseBranch: 'trunk', provider: { kind: 'scripted', script } } });
      const task = await store.tasks.create({ projectId: project.id, title: 'Add a line', complexity: 'easy' });
      daemon.orchestrator.kick();
      await until(bus, async () => {
        const t = await store.tasks.get(task.id);
        if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
        return t.status === 'exec_review';
      }, `${task.id} at exec_review`, 120_000);

      await page.goto(`${daemon.boardUrl}#/task/${task.id}`);
      await page.getByTestId('approves-commit').waitFor({ timeout: budget(30_000) });
      await page.getByRole('button', { name: 'Approve execution review of version 1', exact: true }).click();
      const said = await page.getByTestId('confirm-merge').textContent();
      expect(said).toMatch(/^This merges version 1 of “Add a line” into trunk, the project’s base branch: commit [0-9a-f]{12} of maestro\/\S+, 1 file changed \(\+1 −0\)\.$/);
      await page.getByRole('button', { name: 'Yes, approve and merge' }).click();
      await until(bus, async () => (await store.tasks.get(task.id)).status === 'done', `${task.id} merged`, 120_000);
      expect(git(repo, 'show', 'trunk:notes.txt')).toBe('a\nb');
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(300_000));
});
