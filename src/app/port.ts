/**
 * The daemon's port: checked before the home is made or touched, then listened on.
 *
 * A start refused only at listen had by then made its home's folder, database, token and logs: a first start on
 * a port another daemon held left a fresh home populated by a daemon that never ran. So a taken port is found
 * first (refusePortInUse), while nothing exists yet. Something may still take the port in the seconds between
 * that check and listen (opening and migrating the store); listen then says the same, PORT_IN_USE.
 */
import type { FastifyInstance } from 'fastify';
import type { MaestroConfig } from '../config/config.js';
import { MaestroError } from '../core/errors.js';
import { homeInUse } from '../daemon/homeLock.js';
import { bindError } from '../lib/bindProbe.js';

function portInUse(config: Pick<MaestroConfig, 'host' | 'port'>): MaestroError {
  return new MaestroError('PORT_IN_USE', `Port ${config.port} on ${config.host} is in use. Stop what uses it or pick another with --port / MAESTRO_PORT.`, { details: { host: config.host, port: config.port } });
}

/**
 * Refuses a port something listens on, before anything of the home is made. When a live daemon holds this
 * home's lock it is that daemon, most likely, that has the port (`maestro serve` started twice): HOME_IN_USE
 * then, naming its pid, as the lock would. Port 0 takes any free port: nothing to check. Other bind errors
 * (an address this machine lacks, a privileged port) are left to listen, as before.
 */
export async function refusePortInUse(config: Pick<MaestroConfig, 'host' | 'port' | 'home'>): Promise<void> {
  if (config.port === 0) return;
  const err = await bindError(config.host, config.port);
  if (err?.code === 'EADDRINUSE') throw homeInUse(config.home) ?? portInUse(config);
}

/** Listens on the configured host and port (a port in use is PORT_IN_USE); the port actually bound and the URL. */
export async function listen(app: FastifyInstance, config: MaestroConfig): Promise<{ port: number; url: string }> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw portInUse(config);
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  return { port, url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}` };
}
