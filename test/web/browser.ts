/** Headless Chromium for the board's end-to-end tests and its benchmark (playwright-core drives the system browser). */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ensureWebBuilt, webRoutes } from '../../src/api/web.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';

export const CHROMIUM = '/usr/bin/chromium';
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Why the browser suites cannot run here, or null. In CI a missing browser is a failure, not a skip. */
export function browserSkipReason(): string | null {
  if (existsSync(CHROMIUM) || process.env.CI) return null;
  return `${CHROMIUM} is missing (apt-get install -y chromium); the browser tests are SKIPPED`;
}

export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  // A fresh profile every time: nothing remembered from an earlier run (the language choice included).
  const userDataDir = mkdtempSync(join(tmpdir(), 'maestro-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1440, height: 900 } });
  // Every locator wait without its own timeout (playwright's default is 30 s) scales with the load.
  context.setDefaultTimeout(budget(30_000));
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** startTestDaemon's plugins for a daemon that serves the built board. */
export const BOARD_PLUGINS = [(app: Parameters<typeof webRoutes>[0]) => webRoutes(app)];

/**
 * One Chromium for a suite, called inside its describe: the board is built if stale and the browser launched before
 * the suite's own beforeAll hooks (registered after this), and closed after its tests, with the temp folders they
 * made removed. `context` is there from the first test (or a later beforeAll) on.
 */
export function withBrowser(): { readonly context: BrowserContext } {
  let browser: Awaited<ReturnType<typeof launchBrowser>> | null = null;
  beforeAll(async () => {
    ensureWebBuilt();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    browser = null;
    removeTempDirs();
  });
  return {
    get context() {
      if (!browser) throw new Error('withBrowser(): the browser is launched in beforeAll; use it from a test or a later hook');
      return browser.context;
    },
  };
}
