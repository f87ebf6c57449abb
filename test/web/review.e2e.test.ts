/**
 * The reviewer's cockpit end to end, in headless Chromium against a real
 * daemon, a real repository and the scripted agent: at exec_review the
 * reviewer opens the diff (checks, findings pinned to their line), comments
 * on two lines and rejects from the keyboard; version 2's execute prompt must
 * carry both comments (the script has no step for a prompt without them: the
 * run would fail and the task stop); the reviewer approves version 2 and it
 * merges. Screens are saved under test-output/web/.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const OUT = join(process.cwd(), 'test-output', 'web');
const skip = browserSkipReason();

const A_V1 = "export function greet(name) {\n  const x = 'hello, ' + name;\n  return x;\n}\n";
const B_V1 = "import { greet } from './a.js';\n\nconsole.log(greet('world'));\n";
const A_V2 = "export function greet(name) {\n  const greeting = 'hello, ' + name;\n  return greeting;\n}\n";
const B_V2 = "import { greet } from './a.js';\n\nconst NAME = 'world';\nconsole.log(greet(NAME));\n";

// The first step only answers a prompt holding both comments in the feedback's `file:line — text` form.
const SCRIPT = `steps:
  - match: { role: execute, prompt: '/src/a\\.js:2 — Name it greeting, not x[\\s\\S]*src/b\\.js:3 — Use a constant for the name/' }
    actions:
      - write: { path: src/a.js, content: ${JSON.stringify(A_V2)} }
      - write: { path: src/b.js, content: ${JSON.stringify(B_V2)} }
  - match: { role: execute, prompt: 'Feedback to address' }
    actions:
      - fail: "the execute prompt lacks the reviewer's line comments"
  - match: { role: execute }
    actions:
      - write: { path: src/a.js, content: ${JSON.stringify(A_V1)} }
      - write: { path: src/b.js, content: ${JSON.stringify(B_V1)} }
  - match: { role: 'review:code' }
    actions:
      - verdict: { verdict: approve, findings: [{ severity: medium, file: src/a.js, line: 2, message: "the name x says nothing" }] }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

describe.skipIf(skip !== null)("the reviewer's cockpit in Chromium", () => {
  const browser = withBrowser();
  let page: Page;

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err.message));
  });

  it('comments on two lines, rejects, sees them in version 2, approves it and it merges', async () => {
    const repo = makeRepo({
      'src/a.js': "export function greet(name) {\n  return 'hi ' + name;\n}\n",
      // A check the executor runs, shown beside the diff; the model the agents get, shown in the runs.
      '.maestro/config.json': JSON.stringify({ checks: { syntax: ['node', '--check', 'src/a.js'] }, models: { easy: 'model-for-e2e' } }),
    });
    const script = join(tempDir('maestro-script-'), 'review.yaml');
    writeFileSync(script, SCRIPT);
    const daemon: TestDaemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      const { store, bus } = daemon;
      // Another project, listed first: the board shows it until a link opens a task of "cockpit".
      const other = await store.projects.create({ name: 'another', repoPath: makeRepo(), config: {} });
      await store.tasks.create({ projectId: other.id, title: 'Unrelated work' });
      const project = await store.projects.create({ name: 'cockpit', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
      const v1 = await store.tasks.create({ projectId: project.id, title: 'Greet people', complexity: 'easy', ownedFiles: ['src/a.js', 'src/b.js'] });
      daemon.orchestrator.kick();
      const atGate = (id: string) =>
        until(bus, async () => {
          const t = await store.tasks.get(id);
          if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
          return t.status === 'exec_review' ? t : null;
        }, `${id} at exec_review`, 120_000);
      await atGate(v1.id);

      // The diff, full width: the file tree, the check, the reviewer's finding pinned under its line.
      await page.goto(`${daemon.boardUrl}#/task/${v1.id}/review`);
      const viewer = page.getByTestId('diff-viewer');
      await viewer.waitFor({ timeout: budget(30_000) });
      expect(await page.getByRole('navigation', { name: 'Changed files' }).getByRole('button').allTextContents()).toEqual(['a.js', 'b.js']);
      await page.getByTestId('check').getByText('syntax').waitFor();
      expect(await page.getByTestId('check').textContent()).toContain('passed');
      const finding = page.getByTestId('line-finding');
      expect(await finding.textContent()).toBe('medium Code reviewer: the name x says nothing');
      expect(await finding.locator('xpath=ancestor::tr[1]/preceding-sibling::tr[1]').textContent()).toContain("const x = 'hello, ' + name;");
      // Highlighted by Prism (a frame after the plain lines).
      await viewer.locator('.token.keyword').first().waitFor();

      // Two line comments.
      await page.getByRole('button', { name: 'Comment on src/a.js added line 2' }).click();
      await page.getByLabel('Your comment on src/a.js, line 2').fill('Name it greeting, not x');
      await page.getByRole('button', { name: 'Add the comment' }).click();
      await page.getByRole('button', { name: 'Comment on src/b.js added line 3' }).click();
      await page.getByLabel('Your comment on src/b.js, line 3').fill('Use a constant for the name');
      await page.getByRole('button', { name: 'Add the comment' }).click();
      expect(await page.getByTestId('line-comment').count()).toBe(2);
      expect(await page.getByTestId('comments-to-send').textContent()).toBe('A rejection sends 2 line comments: src/a.js:2, src/b.js:3');
      await page.getByRole('button', { name: 'Split' }).click();
      await page.screenshot({ path: join(OUT, '20-review-diff.png') });

      // Reject from the keyboard: `r` outside any field asks to confirm.
      await page.getByLabel('Reason (required to reject)').fill('Clearer names, please.');
      await page.getByTestId('diff-totals').click();
      await page.keyboard.press('r');
      await page.getByRole('alertdialog').getByText('Reject, sending the reason and 2 line comments?').waitFor();
      await page.getByRole('button', { name: 'Yes, reject' }).click();

      const v2 = await until(bus, async () => (await store.tasks.list({ projectId: project.id })).find((t: Task) => t.parentVersionId === v1.id) ?? null, 'version 2');
      expect(v2.feedback).toContain('src/a.js:2 — Name it greeting, not x');
      // The board follows the task to its new version, and behind it is the task's own project.
      await page.waitForURL(`**/#/task/${v2.id}`);
      await page.locator(`[data-card="${v2.id}"]`).waitFor();
      expect(await page.getByRole('button', { name: 'cockpit', pressed: true }).count()).toBe(1);
      expect(await page.locator('[data-card]').filter({ hasText: 'Unrelated work' }).count()).toBe(0);
      await atGate(v2.id);
      const runs = await store.runs.list({ taskId: v2.id });
      const execute = runs.find((r) => r.kind === 'execute')!;
      expect(execute.status).toBe('succeeded');
      // The prompt as the agent received it (the transcript's first line of the run).
      const prompt = JSON.parse(readFileSync(join(execute.runDir!, 'transcript.jsonl'), 'utf8').split('\n')[0]!) as { text: string };
      expect(prompt.text).toContain('src/a.js:2 — Name it greeting, not x');
      expect(prompt.text).toContain('src/b.js:3 — Use a constant for the name');

      // Version 2 at its gate: its diff, its runs (attempt 1, the model the agent was given), approve by keyboard.
      await page.getByTestId('diff-viewer').getByText("const greeting = 'hello, ' + name;").waitFor({ timeout: budget(30_000) });
      const runRows = page.getByTestId('runs').locator('tbody tr');
      await runRows.first().waitFor();
      expect((await runRows.first().locator('td').allTextContents()).slice(0, 4)).toEqual(['execute', '1', 'succeeded', 'model-for-e2e']);
      await page.screenshot({ path: join(OUT, '21-review-v2.png') });
      await page.getByTestId('detail-title').click();
      await page.keyboard.press('a');
      await page.getByRole('button', { name: 'Yes, approve and merge' }).click();
      await until(bus, async () => (await store.tasks.get(v2.id)).status === 'done', 'version 2 merged', 120_000);
      expect(readFileSync(join(repo, 'src/a.js'), 'utf8')).toBe(A_V2);
      expect(readFileSync(join(repo, 'src/b.js'), 'utf8')).toBe(B_V2);
      await narrowScreen(v2.id);
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(300_000));

  /** At 800 px, with a task open: every lane can be brought into view, and no placeholder is cut off, in any language. */
  async function narrowScreen(taskId: string) {
    await page.setViewportSize({ width: 800, height: 700 });
    try {
      await page.goto(page.url().replace(/#.*$/, `#/task/${taskId}`));
      const lanes = page.locator('[data-lane]');
      await lanes.first().waitFor();
      expect(await lanes.count()).toBe(5);
      for (let i = 0; i < 5; i++) {
        const lane = lanes.nth(i);
        await lane.scrollIntoViewIfNeeded();
        const box = (await lane.boundingBox())!;
        // Its title, at least, is on screen and not under the open task.
        const detail = (await page.getByRole('complementary', { name: 'Task detail' }).boundingBox())!;
        expect(box.x, `lane ${i}`).toBeGreaterThanOrEqual(0);
        expect(box.x + 60, `lane ${i}`).toBeLessThanOrEqual(detail.x);
      }
      await page.screenshot({ path: join(OUT, '22-board-800px.png') });
      for (const lang of ['en', 'zh', 'es', 'ja', 'fr']) {
        await page.getByLabel(/^(Language|语言|Idioma|言語|Langue)$/).selectOption(lang);
        const search = page.locator('input[type="search"]').first();
        const placeholder = (await search.getAttribute('placeholder'))!;
        await search.fill(placeholder);
        const fits = await search.evaluate((el) => { const box = el as unknown as { scrollWidth: number; clientWidth: number }; return box.scrollWidth <= box.clientWidth; });
        expect(fits, `${lang}: "${placeholder}" is cut off`).toBe(true);
        await search.fill('');
      }
      await page.getByLabel(/^(Language|语言|Idioma|言語|Langue)$/).selectOption('en');
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
    }
  }
});
