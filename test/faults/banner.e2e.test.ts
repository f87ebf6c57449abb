/**
 * The board's banner in headless Chromium while the daemon's disk is full:
 * it appears when the daemon reports DISK_FULL and goes away once space is
 * freed, without a reload (the condition arrives on the WebSocket).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureWebBuilt } from '../../src/api/web.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { BOARD_PLUGINS, browserSkipReason, launchBrowser } from '../web/browser.js';
import { mountTmpfs, requireTmpfs, type Tmpfs } from './tmpfs.js';
import { budget } from '../helpers/budget.js';

const OUT = join(process.cwd(), 'test-output', 'web');
const mountable = requireTmpfs('faults: disk-full banner');
const noBrowser = browserSkipReason();
if (noBrowser) console.warn(`\n*** faults banner e2e: ${noBrowser} ***\n`);

describe.skipIf(!mountable || noBrowser !== null)('disk-full banner in Chromium', () => {
  let daemon: TestDaemon | null = null;
  let disk: Tmpfs | null = null;
  let browser: Awaited<ReturnType<typeof launchBrowser>> | null = null;
  afterEach(async () => {
    try {
      await browser?.close();
      await daemon?.stop({ graceMs: 2000 });
    } finally {
      browser = null;
      daemon = null;
      disk?.unmount();
      disk = null;
      removeTempDirs();
    }
  });

  it('shows the full disk, with its path, while it lasts', { timeout: budget(240_000) }, async () => {
    ensureWebBuilt();
    mkdirSync(OUT, { recursive: true });
    disk = mountTmpfs(16);
    const home = join(disk.dir, 'home');
    daemon = await startTestDaemon({ home }, { healthProbeMs: 100, noOrchestrator: true, plugins: BOARD_PLUGINS });
    browser = await launchBrowser();
    const page = await browser.context.newPage();
    await page.goto(daemon.boardUrl);
    await page.getByTestId('connection').getByText('Live').waitFor({ timeout: budget(60_000) });
    expect(await page.getByRole('alert').count()).toBe(0);

    disk.fill();
    const alert = page.getByRole('alert').filter({ hasText: 'is full: no new tasks start until space is freed.' });
    await alert.waitFor({ timeout: budget(60_000) });
    expect(await alert.textContent()).toBe(`The disk holding ${home} is full: no new tasks start until space is freed.`);
    await page.screenshot({ path: join(OUT, 'disk-full-banner.png') });

    disk.free();
    await alert.waitFor({ state: 'detached', timeout: budget(60_000) });
  });
});
