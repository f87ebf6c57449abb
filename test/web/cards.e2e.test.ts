/**
 * The board's layout, in Chromium. A card's long title is cut after whole lines, with an ellipsis, never through a
 * line: it was cut at 4.2em, which at the board's line height showed three lines and the top of a fourth (a new-user
 * trial, 2026-12). With a task open, every lane stays in sight (the Stopped lane was out of sight behind the
 * detail panel at 1440 px), and a narrow card keeps its version tag on the title's line (it wrapped onto a line of
 * its own).
 */
import { describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const skip = browserSkipReason();
const LONG = 'Second round: build a greeting command with an unusually long title that keeps going to see how cards wrap it';

describe.skipIf(skip !== null)("the board's layout in Chromium", () => {
  const browser = withBrowser();

  it('shows whole lines only, at 1440 and 800 px', async () => {
    const daemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      // No provider: the task stays ready, a card in Backlog.
      const project = await daemon.store.projects.create({ name: 'cards', repoPath: makeRepo({ 'a.txt': 'a\n' }), config: {} });
      await daemon.store.tasks.create({ projectId: project.id, title: LONG });
      const page = await browser.context.newPage();
      await page.goto(daemon.boardUrl);
      const title = page.getByText(LONG, { exact: true });
      await title.waitFor();
      for (const width of [1440, 800]) {
        await page.setViewportSize({ width, height: 800 });
        // The title's lines as laid out (one rectangle each), against the bottom of what the card shows of it.
        type Box = { top: number; bottom: number; height: number };
        type Laid = { getBoundingClientRect(): Box; scrollHeight: number; ownerDocument: { createRange(): { selectNodeContents(n: unknown): void; getClientRects(): Iterable<Box> } } };
        const { bottom, lines, full, height } = await title.evaluate((node) => {
          const el = node as unknown as Laid; // the root tsconfig has no DOM types
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(el);
          const box = el.getBoundingClientRect();
          return { bottom: box.bottom, height: box.height, full: el.scrollHeight, lines: [...range.getClientRects()].map((r) => ({ top: r.top, bottom: r.bottom })) };
        });
        expect(full, `${width}px: the title is long enough to be cut`).toBeGreaterThan(height + 1);
        const cutThrough = lines.filter((l) => l.top < bottom - 0.5 && l.bottom > bottom + 0.5);
        expect(cutThrough, `${width}px: a line is cut through at ${bottom}px`).toEqual([]);
      }
      await page.close();
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(120_000));

  it('keeps every lane in sight with a task open, and a version tag on its title line', async () => {
    const daemon = await startTestDaemon({ tickMs: 100 }, { plugins: BOARD_PLUGINS });
    try {
      // No provider: nothing runs. Version 2 comes from a rejection at plan review; its card waits in Backlog.
      const project = await daemon.store.projects.create({ name: 'lanes', repoPath: makeRepo({ 'a.txt': 'a\n' }), config: {} });
      const v1 = await daemon.store.tasks.create({ projectId: project.id, title: 'Add the command line' });
      for (const to of ['queued', 'planning', 'plan_review'] as const) await daemon.store.tasks.transition(v1.id, to);
      const { next: v2 } = await daemon.store.tasks.reject(v1.id, 'plan_review', 'web', 'split it in two');
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.goto(daemon.boardUrl);
      await page.locator(`[data-card="${v2.id}"]`).click();
      const panel = page.getByRole('complementary');
      await panel.waitFor();
      const lanes = page.locator('[data-lane]');
      expect(await lanes.count()).toBe(5);

      // 1440 px: all five lanes whole, between the sidebar and the panel, without scrolling.
      const panelBox = (await panel.boundingBox())!;
      const boardBox = (await page.getByRole('region', { name: 'Board' }).boundingBox())!;
      for (let i = 0; i < 5; i++) {
        const box = (await lanes.nth(i).boundingBox())!;
        const name = await lanes.nth(i).getAttribute('data-lane');
        expect(box.x, `${name} starts on the board`).toBeGreaterThanOrEqual(boardBox.x);
        expect(box.x + box.width, `${name} ends left of the panel`).toBeLessThanOrEqual(panelBox.x + 0.5);
      }
      // What the person sees at the Stopped lane's title is that title, nothing drawn over it.
      // (In-page code as text: the root tsconfig has no DOM types.)
      expect(await page.evaluate(`(() => {
        const h = document.querySelector('[data-lane="lane.attention"] h2');
        const r = h.getBoundingClientRect();
        return h.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
      })()`)).toBe(true);

      // On that narrow card the tag "v2" sits on the title's first line, right of it.
      const card = page.locator(`[data-card="${v2.id}"]`);
      const tag = card.getByTestId('card-version');
      await expect(tag.textContent()).resolves.toBe('v2');
      type Measured = { firstLine: { top: number; bottom: number; right: number }; tagBox: { top: number; bottom: number; left: number }; lines: number };
      const { firstLine, tagBox, lines } = await page.evaluate<Measured>(`(() => {
        const card = document.querySelector('[data-card="${v2.id}"]');
        const range = document.createRange();
        range.selectNodeContents(card.querySelector('span span'));
        const rects = [...range.getClientRects()];
        const t = card.querySelector('[data-testid="card-version"]').getBoundingClientRect();
        return {
          firstLine: { top: rects[0].top, bottom: rects[0].bottom, right: Math.max(...rects.map((r) => r.right)) },
          tagBox: { top: t.top, bottom: t.bottom, left: t.left },
          lines: new Set(rects.map((r) => Math.round(r.top))).size,
        };
      })()`);
      expect(lines, 'the title wraps on this narrow card').toBeGreaterThan(1);
      const middle = (tagBox.top + tagBox.bottom) / 2;
      expect(middle, 'v2 is on the first line of the title').toBeGreaterThan(firstLine.top);
      expect(middle, 'v2 is on the first line of the title').toBeLessThan(firstLine.bottom);
      expect(tagBox.left, 'v2 is right of the title').toBeGreaterThanOrEqual(firstLine.right);

      // Narrower: the lanes scroll sideways, and each one scrolled to is whole, left of the panel.
      await page.setViewportSize({ width: 1100, height: 800 });
      const narrowPanel = (await panel.boundingBox())!;
      for (let i = 0; i < 5; i++) {
        const name = await lanes.nth(i).getAttribute('data-lane');
        await page.evaluate(`document.querySelector('[data-lane="${name}"]').scrollIntoView({ block: 'nearest', inline: 'nearest' })`);
        const box = (await lanes.nth(i).boundingBox())!;
        expect(box.x + box.width, `${name} scrolled to, left of the panel`).toBeLessThanOrEqual(narrowPanel.x + 1);
      }
      await page.close();
    } finally {
      await daemon.stop({ graceMs: 2000 });
    }
  }, budget(120_000));
});
