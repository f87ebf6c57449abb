/**
 * The board's dev server (`npm run dev --workspace web`) proxies /api to the daemon. Its proxy sent the daemon's
 * token with every request, so anything that reached the dev server drove the daemon without one: an agent in its
 * sandbox (which shares the network) approving its own task through localhost:5173, another local user. The dev
 * board signs in as the daemon's own does, with `?token=` once (web/src/api/token.ts); the proxy adds nothing.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createServer } from 'vite';
import { describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.js';

describe("the board's dev server", () => {
  it('lets no request without the token reach the daemon through its proxy; one with it passes', async () => {
    const daemon = await startTestDaemon();
    const saved = { home: process.env.MAESTRO_HOME, url: process.env.MAESTRO_URL, token: process.env.MAESTRO_TOKEN };
    Object.assign(process.env, { MAESTRO_HOME: daemon.config.home, MAESTRO_URL: daemon.url, MAESTRO_TOKEN: daemon.token! });
    const dev = await createServer({ configFile: join(import.meta.dirname, '../../web/vite.config.ts'), root: join(import.meta.dirname, '../../web'), server: { port: 0, host: '127.0.0.1', hmr: false }, logLevel: 'silent' });
    try {
      await dev.listen();
      const base = `http://127.0.0.1:${(dev.httpServer!.address() as AddressInfo).port}`;
      const bare = await fetch(`${base}/api/projects`);
      expect(bare.status).toBe(401);
      const approve = await fetch(`${base}/api/tasks/t_none/approve`, { method: 'POST', headers: { 'x-maestro-client': 'agent' } });
      expect(approve.status).toBe(401);
      expect((await fetch(`${base}/api/projects`, { headers: { authorization: `Bearer ${daemon.token}` } })).status).toBe(200);
    } finally {
      await dev.close();
      for (const [key, value] of [['MAESTRO_HOME', saved.home], ['MAESTRO_URL', saved.url], ['MAESTRO_TOKEN', saved.token]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      await daemon.stop();
    }
  });
});
