/**
 * The board's card of a task in merging whose merge check runs (the merge queue: the project's checks on its merge
 * with main) says so, with the round, in Chromium: it said only "merging", as if stuck, while the task detail said
 * what was under way. Read on the board's first load, and again live when the check starts another round. A task
 * waiting behind that check says so too, naming it, on its card and in its detail, until the check ends; one checked
 * together with it (the merge queue's batches) says that instead, with how many changes the check holds.
 *
 * The merge check is another daemon's run (owner "elsewhere"): this daemon neither supervises it nor merges the task
 * while it runs (the merge queue waits for a running run), so nothing moves but what the test writes.
 */
import { describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const skip = browserSkipReason();

describe.skipIf(skip !== null)('a merge check on the board, in Chromium', () => {
  const browser = withBrowser();

  it('names it on the card with its round, and follows the next round live', async () => {
    const daemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const project = await daemon.store.projects.create({ name: 'queue', repoPath: makeRepo({ 'a.txt': 'a\n' }), config: {} });
      // Each depends on a task that never finishes, so the scheduler never claims one while the test moves it by hand.
      const blocker = await daemon.store.tasks.create({ projectId: project.id, title: 'Never done' });
      const checked = await daemon.store.tasks.create({ projectId: project.id, title: 'Checked on its merge', deps: [blocker.id] });
      const plain = await daemon.store.tasks.create({ projectId: project.id, title: 'Merging plainly', deps: [blocker.id] });
      const waiting = await daemon.store.tasks.create({ projectId: project.id, title: 'Waiting its turn', deps: [blocker.id] });
      const rider = await daemon.store.tasks.create({ projectId: project.id, title: 'Checked with it', deps: [blocker.id] });
      for (const id of [checked.id, plain.id, waiting.id, rider.id]) for (const to of ['queued', 'executing', 'reviewing'] as const) await daemon.store.tasks.transition(id, to);
      const run = await daemon.store.runs.start({ taskId: checked.id, kind: 'merge_check', model: null, traceId: 'tr-check', attempt: 1, owner: 'elsewhere' });
      const opened = (round: number) => daemon.store.events.append({ projectId: project.id, taskId: checked.id, type: 'merge.check', payload: { branch: 'maestro/b', tip: 'abc', base: 'def', round, maxRounds: 3, owner: 'elsewhere', riders: [{ taskId: rider.id, title: rider.title, branch: 'maestro/r', commit: 'f'.repeat(40) }] } });
      await opened(1);
      await daemon.store.tasks.transition(checked.id, 'merging');
      // The plain one's own run keeps the merge queue off it too: it merges nothing, and runs no check.
      await daemon.store.runs.start({ taskId: plain.id, kind: 'conflict', model: null, traceId: 'tr-plain', attempt: 1, owner: 'elsewhere' });
      await daemon.store.tasks.transition(plain.id, 'merging');
      // One with no run of its own waits behind the check (the merge queue lands nothing else of the project meanwhile).
      await daemon.store.tasks.transition(waiting.id, 'merging');
      await daemon.store.tasks.transition(rider.id, 'merging');

      const page = await browser.context.newPage();
      await page.goto(daemon.boardUrl);
      const card = page.locator(`[data-card="${checked.id}"]`);
      await card.getByText('checking merge, round 1 of 3', { exact: true }).waitFor();
      await page.locator(`[data-card="${plain.id}"]`).getByText('merging', { exact: true }).waitFor();
      expect(await page.locator(`[data-card="${plain.id}"]`).textContent()).not.toContain('checking');
      // The one waiting says whose merge check runs, on its card and in its detail, with that task's id.
      const waitingCard = page.locator(`[data-card="${waiting.id}"]`);
      await waitingCard.getByText('waiting for its turn, after Checked on its merge', { exact: true }).waitFor();
      expect(await page.locator(`[data-card="${plain.id}"]`).textContent()).not.toContain('waiting');
      await waitingCard.click();
      await page.getByTestId('merge-turn').getByText(`Waiting for its turn to merge: the merge check of Checked on its merge (${checked.id}) comes first, and the merge queue runs one merge check at a time. This task lands after it.`).waitFor();
      // The one checked together with it says so, with the count.
      const riderCard = page.locator(`[data-card="${rider.id}"]`);
      await riderCard.getByText('checking merge together with Checked on its merge (2 changes)', { exact: true }).waitFor();
      await riderCard.click();
      await page.getByTestId('merge-turn').getByText(`Checking the merge together with Checked on its merge (${checked.id}): 2 changes, checked in one merge check. They land together once the checks pass.`).waitFor();

      // Main moved during the check: the next round is opened, and the card follows without a reload.
      await opened(2);
      await card.getByText('checking merge, round 2 of 3', { exact: true }).waitFor();
      // The check ends: the card no longer says one runs (the merge queue then takes the task as it is; here, with no
      // branch, it parks it, which the card says as any status).
      await daemon.store.runs.finish({ id: run.id, status: 'succeeded' });
      await daemon.store.events.append({ projectId: project.id, taskId: checked.id, runId: run.id, type: 'run.finished', payload: { kind: 'merge_check', status: 'succeeded' } });
      await card.getByText(/checking merge/).waitFor({ state: 'detached' });
      expect(await card.textContent()).not.toContain('checking');
      await waitingCard.getByText(/waiting for its turn/).waitFor({ state: 'detached' });
      await riderCard.getByText(/together with/).waitFor({ state: 'detached' });
      await page.getByTestId('merge-turn').waitFor({ state: 'detached' });
      await page.close();
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(120_000));
});
