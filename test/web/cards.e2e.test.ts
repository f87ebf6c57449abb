/**
 * A card's long title, in Chromium: cut after whole lines, with an ellipsis, never through a line. It was cut at
 * 4.2em, which at the board's line height showed three lines and the top of a fourth (a new-user trial, 2026-12).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuilt, webRoutes } from '../../src/api/web.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { browserSkipReason, launchBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const skip = browserSkipReason();
const LONG = 'Second round: build a greeting command with an unusually long title that keeps going to see how cards wrap it';

describe.skipIf(skip !== null)("a card's long title in Chromium", () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>> | null = null;

  beforeAll(async () => {
    ensureWebBuilt();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    removeTempDirs();
  });

  it('shows whole lines only, at 1440 and 800 px', async () => {
    const daemon = await startTestDaemon({ tickMs: 100 }, { plugins: [(app: Parameters<typeof webRoutes>[0]) => webRoutes(app)] });
    try {
      // No provider: the task stays ready, a card in Backlog.
      const project = await daemon.store.projects.create({ name: 'cards', repoPath: makeRepo({ 'a.txt': 'a\n' }), config: {} });
      await daemon.store.tasks.create({ projectId: project.id, title: LONG });
      const page = await browser!.context.newPage();
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
});
