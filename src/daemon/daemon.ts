/**
 * The daemon: opens the store under $MAESTRO_HOME, migrates it, and serves the
 * API on the configured address. The orchestrator loop, workers and the web
 * board attach here as they are built.
 */
import { mkdirSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import type { MaestroConfig } from '../config/config.js';
import { MaestroError } from '../core/errors.js';

export interface Daemon {
  readonly url: string;
  readonly config: MaestroConfig;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export async function startDaemon(config: MaestroConfig): Promise<Daemon> {
  if (!LOOPBACK.has(config.host) && !config.token) {
    throw new MaestroError('CONFIG_INVALID', `Refusing to bind ${config.host} without MAESTRO_TOKEN: anything but loopback needs a token.`);
  }
  mkdirSync(config.home, { recursive: true });
  const app: FastifyInstance = Fastify({ logger: false });
  app.get('/api/health', async () => ({ ok: true, home: config.home }));
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new MaestroError('CONFIG_INVALID', `Port ${config.port} on ${config.host} is in use. Stop what uses it or pick another with --port / MAESTRO_PORT.`);
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  process.stdout.write(`maestro: daemon on ${url} (data in ${config.home})\n`);
  let stopped = false;
  return {
    url,
    config,
    async stop() {
      if (stopped) return;
      stopped = true;
      await app.close();
    },
  };
}
