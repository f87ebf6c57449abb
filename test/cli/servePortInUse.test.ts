/**
 * `maestro serve` on a port something else listens on: refused with PORT_IN_USE before its home is made or
 * touched. (It used to be refused only at listen, as CONFIG_INVALID, after it had made the home's database,
 * token and logs.) When the daemon of the same home holds the port, the refusal names that daemon (HOME_IN_USE),
 * as the home lock does. The real CLI as a child process; the port held by a plain server or a real daemon here.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { cleanEnv, cli } from './helpers.js';

afterEach(() => removeTempDirs());

async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

const inUse = (port: number) => `maestro: Port ${port} on 127.0.0.1 is in use. Stop what uses it or pick another with --port / MAESTRO_PORT. [PORT_IN_USE]\n`;

describe('maestro serve on a port in use', () => {
  it('exits 1 with PORT_IN_USE and leaves a new empty home empty, and a home that did not exist not made', async () => {
    const { server, port } = await holdPort();
    try {
      const empty = tempDir('maestro-home-');
      const r = await cli(['serve', '--port', String(port), '--no-demo'], cleanEnv({ MAESTRO_HOME: empty }));
      expect(r.stderr).toBe(inUse(port));
      expect(r.code).toBe(1);
      expect(readdirSync(empty)).toEqual([]);

      const absent = join(tempDir('maestro-parent-'), 'home');
      const named = await cli(['serve', '--port', String(port), '--no-demo', '--home', absent]);
      expect(named.stderr).toBe(inUse(port));
      expect(named.code).toBe(1);
      expect(existsSync(absent)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, budget(120_000));

  it("says HOME_IN_USE, naming the daemon, when that home's own daemon holds the port", async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const r = await cli(['serve', '--port', String(d.port), '--no-demo'], cleanEnv({ MAESTRO_HOME: d.config.home }));
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`maestro: Another Maestro daemon (pid ${process.pid}, ${r.stderr.match(/started [^)]+/)?.[0]}) already uses ${d.config.home}. It answers at ${d.url} (the CLI finds it from the home). To start this one, stop that one first (maestro stop, Ctrl-C in its terminal, or kill ${process.pid}: each lets its running stages finish), or use another MAESTRO_HOME. [HOME_IN_USE]\n`);
    } finally {
      await d.stop();
    }
  }, budget(120_000));
});
