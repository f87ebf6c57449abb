/**
 * The review gate of a second version, in headless Chromium against a real daemon, repository and scripted agent:
 * what was asked (the spec, folded past a few lines) and why version 1 was rejected (by whom, when) come before
 * the diff; the gate says how far the base branch moved since the branch was cut, counted again after a commit
 * lands on it; the buttons that close a confirmation and that cancel the task say which they do. Screens are
 * saved under test-output/web/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const OUT = join(process.cwd(), 'test-output', 'web');
const skip = browserSkipReason();

// Enough lines in the diff that it takes more than a screen.
const BODY = Array.from({ length: 120 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const SCRIPT = `steps:
  - match: { role: execute, prompt: 'Feedback to address' }
    actions:
      - write: { path: notes.txt, content: ${JSON.stringify(BODY + 'v2\n')} }
  - match: { role: execute }
    actions:
      - write: { path: notes.txt, content: ${JSON.stringify(BODY)} }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;
const SPEC = ['Write the notes file.', 'Number every line.', 'Keep it plain text.', 'No trailing spaces.', 'End with the version.', 'Sixth line of the spec.', 'Seventh line, the last.'].join('\n');

describe.skipIf(skip !== null)('the review gate of a second version, in Chromium', () => {
  const browser = withBrowser();
  let page: Page;

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err.message));
  });

  it('puts the spec and the rejection before the diff, counts the base moving, names both cancels', async () => {
    const repo = makeRepo({ 'notes.txt': 'a\n' });
    const script = join(tempDir('maestro-script-'), 'gate2.yaml');
    writeFileSync(script, SCRIPT);
    const daemon: TestDaemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const { store, bus } = daemon;
      const project = await store.projects.create({ name: 'gate2', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
      const v1 = await store.tasks.create({ projectId: project.id, title: 'Number the notes', complexity: 'easy', spec: SPEC });
      daemon.orchestrator.kick();
      const atGate = (id: string) =>
        until(bus, async () => {
          const t = await store.tasks.get(id);
          if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
          return t.status === 'exec_review' ? t : null;
        }, `${id} at exec_review`, 120_000);
      await atGate(v1.id);
      const rejected = await daemonRequest(daemon, 'POST', `/api/tasks/${v1.id}/reject`, { who: 'ana', reason: 'The last line must name the version.' });
      expect(rejected.status).toBe(200);
      const v2 = await until(bus, async () => (await store.tasks.list({ projectId: project.id })).find((t: Task) => t.parentVersionId === v1.id) ?? null, 'version 2');
      await atGate(v2.id);

      const rejectedAt = (await store.tasks.get(v1.id)).approvals.find((a) => a.decision === 'reject')!.at;

      await page.goto(`${daemon.boardUrl}#/task/${v2.id}`);
      const diff = page.getByTestId('diff-viewer');
      await diff.getByText('v2').first().waitFor({ timeout: budget(30_000) });
      await page.screenshot({ path: join(OUT, '30-gate-v2.png') });

      // What was asked and what was wrong last time come before the diff, in that order, the rejection with who and when.
      const spec = page.getByTestId('brief-spec');
      const feedback = page.getByTestId('brief-feedback');
      const when = await page.evaluate((at) => new Date(at).toLocaleString('en'), rejectedAt);
      expect(await feedback.textContent()).toBe(`Feedback from version 1Rejected at execution review by ana, ${when}: The last line must name the version.`);
      const top = async (l: ReturnType<Page['getByTestId']>) => (await l.boundingBox())!.y;
      expect(await top(spec)).toBeLessThan(await top(feedback));
      expect(await top(feedback)).toBeLessThan(await top(diff));
      // Folded to four of its seven lines, so a long spec does not push the diff down; "Show all" unfolds it.
      // (The browser's DOM, typed by hand: this project's TypeScript has no DOM library.)
      type Dom = { getBoundingClientRect(): { height: number } };
      const lines = () => spec.evaluate((el) => (el as unknown as Dom).getBoundingClientRect().height / parseFloat((globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }).getComputedStyle(el).lineHeight));
      expect(await lines()).toBeCloseTo(4, 1);
      await page.getByRole('button', { name: 'Show all (7 lines)' }).click();
      expect(await lines()).toBeCloseTo(7, 1);
      expect(await spec.textContent()).toBe(SPEC);
      // Said once: not again under Fields or Plan.
      expect(await page.getByText('Seventh line, the last.').count()).toBe(1);
      expect(await page.getByText('The last line must name the version.').count()).toBe(1);

      // The base branch: up to date, then a commit lands on main and the gate counts it.
      const moved = page.getByTestId('base-moved');
      expect(await moved.textContent()).toBe('The base branch main has no new commit since this branch was cut: up to date.');
      writeFileSync(join(repo, 'elsewhere.txt'), 'landed on main meanwhile\n');
      git(repo, 'add', 'elsewhere.txt');
      git(repo, 'commit', '-q', '-m', 'meanwhile on main');
      await page.reload();
      await moved.getByText('The base branch main has 1 new commit since this branch was cut.').waitFor({ timeout: budget(30_000) });

      // The merge confirmation says what the merge does on the moved main; its second button closes it and says so.
      await page.getByTestId('approves-commit').waitFor({ timeout: budget(30_000) });
      await page.getByRole('button', { name: 'Approve execution review of version 2', exact: true }).click();
      expect(await page.getByTestId('confirm-merge').textContent()).toContain('main moved since this branch was cut: git merges the branch onto main as it is now (the project has no checks to run on the result).');
      await page.screenshot({ path: join(OUT, '31-gate-v2-confirm.png') });
      // No button on the screen is a bare "Cancel": one closes the confirmation, the other cancels the task, after asking.
      expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
      await page.getByRole('button', { name: 'Don’t merge yet' }).click();
      expect(await page.getByRole('alertdialog').count()).toBe(0);
      await page.getByRole('button', { name: 'Cancel this task…' }).click();
      await page.getByRole('button', { name: 'No, keep the task' }).waitFor();
      expect(await page.getByRole('button', { name: 'Yes, cancel the task' }).count()).toBe(1);
      await page.getByRole('button', { name: 'No, keep the task' }).click();
      expect((await store.tasks.get(v2.id)).status).toBe('exec_review');
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(300_000));
});
