/** `maestro serve` (alias `start`): run the daemon in the foreground. */
import type { Command } from 'commander';
import { resolveConfig } from '../../config/config.js';
import { startDaemon } from '../../daemon/daemon.js';
import { MaestroError } from '../../core/errors.js';
import { action } from '../output.js';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new MaestroError('BAD_INPUT', `--port must be 0–65535, got "${value}".`);
  return port;
}

export function register(program: Command): void {
  program
    .command('serve')
    .alias('start')
    .description('Run the Maestro daemon and web board (default http://127.0.0.1:4300).')
    .option('--host <host>', 'address to bind (anything but loopback needs MAESTRO_TOKEN)')
    .option('--port <port>', 'port to listen on (MAESTRO_PORT)', parsePort)
    .option('--home <dir>', 'data directory (MAESTRO_HOME, default ~/.maestro)')
    .option('--database <url>', 'sqlite:<path> (default) or a postgres:// URL (MAESTRO_DATABASE)')
    .action(
      action(async (opts: { host?: string; port?: number; home?: string; database?: string }) => {
        const config = resolveConfig(opts);
        const daemon = await startDaemon(config, { announce: true });
        const stop = async () => {
          await daemon.stop();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }),
    );
}
