/**
 * The knowledge a task's run proposed, on the board, in headless Chromium against a real daemon, repository and
 * scripted agent whose report (.maestro/report.md) stages three candidates:
 * - at exec_review the task detail names them (count, titles) and links to the review queue on that session alone,
 *   as `maestro task show` does (the change and its knowledge are decided apart);
 * - two promotions in a row work without a Reconcile: after its own promotion the board refreshes the standing of
 *   the others (a promotion changes the project knowledge every receipt was matched against);
 * - an entry added by someone else makes the receipts stale for real: the queue says why and what Reconcile does,
 *   and Promote still works, as the API's does (it refreshes the receipt and refuses a candidate whose standing changed).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReviewResult } from '../../src/api/wire/knowledgeReview.js';
import { sessionIdFor } from '../../src/core/supersededVersion.js';
import { addKnowhow } from '../../src/knowledge/format/knowhowWriter.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';
import { reportingScript } from '../helpers/reportScript.js';

const skip = browserSkipReason();

/** Every spec and knowhow file of the repository's .workflow/, as one text: what the promotions wrote. */
function written(repo: string): string {
  return ['specs', 'knowhow'].flatMap((d) => {
    const dir = join(repo, '.workflow', d);
    return existsSync(dir) ? readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')) : [];
  }).join('\n');
}

const LOCKED_A = 'Greetings never end with punctuation.';
const LOCKED_B = 'Log timestamps are written in UTC.';
const ACCEPTED_C = 'Configuration files are parsed with the strict YAML loader.';

const SCRIPT = reportingScript({ writes: [{ path: 'src/greet.ts', content: "export const greet = () => 'hello';\n" }], summary: 'greeting added', decisions: [ACCEPTED_C], constraints: [LOCKED_A, LOCKED_B] });

describe.skipIf(skip !== null)('the knowledge a run proposed, on the board', () => {
  const browser = withBrowser();
  let page: Page;

  beforeAll(async () => {
    page = await browser.context.newPage();
  });

  it('names it at the gate, and promotes one candidate after another without a Reconcile', async () => {
    const repo = makeRepo({ 'README.md': '# greet\n' });
    const script = join(tempDir('maestro-script-'), 'knowledge.yaml');
    writeFileSync(script, SCRIPT);
    const daemon: TestDaemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const { store, bus } = daemon;
      const project = await store.projects.create({ name: 'greet', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
      const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy' });
      daemon.orchestrator.kick();
      await until(bus, async () => {
        const t = await store.tasks.get(task.id);
        if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
        return t.status === 'exec_review';
      }, 'the task at exec_review', 120_000);
      const sid = sessionIdFor(task.id);
      const reviewOf = async () => (await daemonRequest<ReviewResult>(daemon, 'GET', `/api/knowledge/review/${sid}?projectId=${project.id}`)).body;
      // The run's report is staged (and its run sealed) by the knowledge hook after the run's last record: wait for it.
      await poll(async () => {
        const r = await reviewOf();
        return r.candidates?.length === 3 && r.candidates.every((c) => c.status === 'pending' && c.receipt === 'fresh' && c.promotion_eligibility === 'eligible');
      }, 'three pending, eligible candidates', 60_000, 200);

      // The gate says what the run proposed, apart from the change.
      await page.goto(`${daemon.boardUrl}#/task/${task.id}`);
      const staged = page.getByTestId('staged-knowledge');
      await staged.waitFor({ timeout: budget(30_000) });
      expect(await staged.textContent()).toContain("This task's runs staged 3 knowledge candidates (3 not decided yet). They are reviewed apart from the change: approving the change promotes none of them.");
      for (const title of [LOCKED_A, LOCKED_B, ACCEPTED_C]) expect(await staged.getByText(title).count()).toBe(1);

      // Its link opens the review queue on this session alone.
      await staged.getByRole('link', { name: 'Review them in the knowledge queue' }).click();
      await page.getByTestId('review-filter').waitFor();
      expect(page.url()).toBe(`${daemon.url}/#/knowledge/review/${sid}`);
      expect(await page.getByRole('region', { name: `Session ${sid}` }).count()).toBe(1);
      const card = (title: string) => page.getByRole('region', { name: title });

      // Two promotions in a row: the second needs no Reconcile, and the others' standing is as fresh as before.
      await card(LOCKED_A).getByRole('button', { name: 'Promote' }).click();
      await page.getByTestId('review-note').getByText(/^Promoted as /).waitFor();
      // A promoted candidate leaves the queue (the review lists what is left to decide).
      await card(LOCKED_A).waitFor({ state: 'detached' });
      for (const title of [LOCKED_B, ACCEPTED_C]) expect(await card(title).textContent()).toContain('Receipt: fresh');
      expect(await page.getByTestId('review-stale').count()).toBe(0);
      const promoteB = card(LOCKED_B).getByRole('button', { name: 'Promote' });
      expect(await promoteB.isEnabled()).toBe(true);
      await promoteB.click();
      await card(LOCKED_B).waitFor({ state: 'detached' });
      expect(await page.getByRole('alert').count()).toBe(0);
      expect((await reviewOf()).candidates.map((c) => c.title)).toEqual([ACCEPTED_C]);
      expect(written(repo)).toContain(LOCKED_A);
      expect(written(repo)).toContain(LOCKED_B);

      // Someone else adds an entry: the receipts are stale for a reason of its own, which the queue says, with what
      // Reconcile does; Promote still works (the promotion checks the candidate again, and its standing held).
      const root = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_HOME: daemon.config.home } });
      addKnowhow(root, { type: 'tip', title: 'Deploys wait for the weekly window', body: 'Production deploys happen on Tuesdays.' });
      await page.reload();
      const stale = page.getByTestId('review-stale');
      await stale.waitFor();
      expect(await stale.textContent()).toContain('What is shown may be out of date:');
      expect(await stale.textContent()).toContain('project knowledge changed since the receipt');
      expect(await stale.textContent()).toContain('Reconcile matches these candidates again against the project knowledge as it is now');
      expect(await card(ACCEPTED_C).textContent()).toContain('Receipt: stale');
      const promoteC = card(ACCEPTED_C).getByRole('button', { name: 'Promote' });
      expect(await promoteC.isEnabled()).toBe(true);
      await promoteC.click();
      await card(ACCEPTED_C).waitFor({ state: 'detached' });
      expect(await page.getByRole('alert').count()).toBe(0);
      expect((await reviewOf()).candidates).toEqual([]);
      expect(written(repo)).toContain(ACCEPTED_C);
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(300_000));
});
