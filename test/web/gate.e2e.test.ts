/**
 * The approval gate in headless Chromium against a real daemon, repository and scripted agent: what the
 * reviewer sees of changes without lines of their own (a dropped final newline, CRLF line ends, an empty
 * file), two tabs on one version when one rejects it, approving version 2 from the keyboard, and the
 * diff a merged version shows against the one its gate showed.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/wire/responses.js';
import type { Task } from '../../src/core/types.js';
import { tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const skip = browserSkipReason();

const SCRIPT = `steps:
  - match: { role: execute, prompt: 'Feedback to address' }
    actions:
      - write: { path: notes.txt, content: "a\\nb\\nc\\n" }
  - match: { role: execute }
    actions:
      - write: { path: notes.txt, content: "a\\nb" }
      - write: { path: win.txt, content: "x\\r\\ny\\r\\n" }
      - write: { path: empty.txt, content: "" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

describe.skipIf(skip !== null)('the approval gate in Chromium', () => {
  const browser = withBrowser();
  let tabA: Page;
  let tabB: Page;

  beforeAll(async () => {
    tabA = await browser.context.newPage();
    tabB = await browser.context.newPage();
  });

  it('shows what has no lines, keeps a second tab from deciding on a rejected version, approves by keyboard', async () => {
    const repo = makeRepo({ 'notes.txt': 'a\nb\n', 'win.txt': 'x\ny\n' });
    const script = join(tempDir('maestro-script-'), 'gate.yaml');
    writeFileSync(script, SCRIPT);
    const daemon: TestDaemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const { store, bus } = daemon;
      const project = await store.projects.create({ name: 'gate', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
      const v1 = await store.tasks.create({ projectId: project.id, title: 'Tidy the notes', complexity: 'easy' });
      daemon.orchestrator.kick();
      const atGate = (id: string) => until(bus, async () => {
        const t = await store.tasks.get(id);
        if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
        return t.status === 'exec_review' ? t : null;
      }, `${id} at exec_review`, 120_000);
      await atGate(v1.id);

      for (const tab of [tabA, tabB]) await tab.goto(`${daemon.boardUrl}#/task/${v1.id}`);
      const viewer = tabA.getByTestId('diff-viewer');
      await viewer.waitFor({ timeout: budget(30_000) });
      // The lines "-b" "+b" differ only by the newline: said under the line; CR line ends drawn; an empty file said.
      expect(await tabA.getByTestId('no-newline').textContent()).toBe('No newline at end of file');
      const win = tabA.getByRole('region', { name: 'win.txt' });
      await win.scrollIntoViewIfNeeded(); // files past the first two are drawn as they near the screen
      await win.getByText('x\u240d').first().waitFor();
      expect(await tabA.getByRole('region', { name: 'empty.txt' }).textContent()).toContain('An empty file.');
      expect(await tabA.getByRole('button', { name: 'Approve execution review of version 1', exact: true }).count()).toBe(1);

      // Tab B rejects version 1; tab A, open on it, loses its gate (the feed says so) and never approves it.
      await tabB.getByLabel('Reason (required to reject)').fill('Keep the final newline.');
      await tabB.getByRole('button', { name: 'Reject execution review of version 1' }).click();
      await tabA.getByRole('heading', { name: /^Waiting for you/ }).waitFor({ state: 'detached' });
      const late = await daemonRequest<{ error: { code: string } }>(daemon, 'POST', `/api/tasks/${v1.id}/approve`, { who: 'tab A' });
      expect(late.status).toBe(409);
      const v2 = await until(bus, async () => (await store.tasks.list({ projectId: project.id })).find((t: Task) => t.parentVersionId === v1.id) ?? null, 'version 2');
      await atGate(v2.id);

      // Version 2 from the keyboard: `a`, the confirmation names the version, Enter approves.
      await tabA.goto(`${daemon.boardUrl}#/task/${v2.id}`);
      await tabA.getByTestId('diff-viewer').getByText('c').first().waitFor({ timeout: budget(30_000) });
      const atReview = (await daemonRequest<DiffResponse>(daemon, 'GET', `/api/tasks/${v2.id}/diff`)).body;
      await tabA.getByTestId('detail-title').click();
      await tabA.keyboard.press('a');
      expect(await tabA.getByRole('alertdialog').textContent()).toContain('Approve execution review of version 2?');
      await tabA.keyboard.press('Enter');
      await until(bus, async () => (await store.tasks.get(v2.id)).status === 'done', 'version 2 merged', 120_000);
      expect((await store.tasks.get(v1.id)).approvals.filter((a) => a.decision === 'approve')).toEqual([]);
      // The approval named the commit the gate's diff showed, the reviewed one.
      const approval = (await store.events.list({ taskId: v2.id, type: 'task.status' })).events.find((e) => e.payload.decision === 'approve');
      expect(approval?.payload.commit).toBe(atReview.head);

      // What landed is what the gate showed.
      const merged = (await daemonRequest<DiffResponse>(daemon, 'GET', `/api/tasks/${v2.id}/diff`)).body;
      expect(merged.files).toEqual(atReview.files);
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(300_000));
});
