/**
 * The board's sign-in, seen from another server on 127.0.0.1. Browsers send a host's cookies to every port of it,
 * so the board's old cookie (the daemon's token itself) went to whatever else the person opened on 127.0.0.1 in the
 * same browser: the dev server an agent started in its sandbox (which shares the network) to show its work, or
 * another local user's page. With the token, that server's owner drives the daemon: approves the agent's task.
 * The board keeps the token in its own origin's storage (port included) instead, and sends it itself; the cookie
 * an older board set is cleared.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';

const skip = browserSkipReason();

describe.skipIf(skip !== null)('another server on 127.0.0.1, opened in the browser signed in to the board', () => {
  const browser = withBrowser();

  it("is sent no token, and the board stays signed in (a new tab, its live feed) without the link's", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>preview</title><p>the agent\'s page</p><img src="/pixel.png">');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const daemon = await startTestDaemon({}, { plugins: BOARD_PLUGINS });
    try {
      const project = await daemon.store.projects.create({ name: 'ports', repoPath: makeRepo({ 'a.txt': 'a\n' }) });
      await daemon.store.tasks.create({ projectId: project.id, title: 'Seen from another port', complexity: 'easy' });
      // The cookie an older board left in this browser is cleared by the board's first requests.
      await browser.context.addCookies([{ name: `maestro_token_${daemon.port}`, value: daemon.token!, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Strict', expires: Math.floor(Date.now() / 1000) + 90 * 24 * 3600 }]);
      const page = await browser.context.newPage();
      await page.goto(daemon.boardUrl);
      await page.getByText('Seen from another port').first().waitFor();
      expect(page.url()).not.toContain(daemon.token);

      await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      await page.getByText("the agent's page").waitFor();
      expect(seen.length).toBeGreaterThan(0);
      for (const headers of seen) expect(JSON.stringify(headers)).not.toContain(daemon.token);

      // Back on the board without the link, in a new tab: still signed in, its feed live, and it writes.
      const again = await browser.context.newPage();
      await again.goto(`${daemon.url}/`);
      const card = again.getByText('Seen from another port').first();
      await card.waitFor();
      await again.getByText('Live', { exact: true }).waitFor();
      expect(await again.getByTestId('sign-in').count()).toBe(0);
      await again.close();
      await page.close();
    } finally {
      await daemon.stop();
      other.close();
    }
  });
});
