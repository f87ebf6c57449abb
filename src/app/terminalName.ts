/**
 * The name a daemon's terminal says its lines with. Two daemons of one PostgreSQL side by side print the same kind
 * of status lines (a task's status, a conflict run started), and nothing said which terminal was which daemon: on a
 * shared database every line carries the daemon's name, and so does a daemon given one (--name, MAESTRO_NAME,
 * config.json). A lone daemon under its default name (host:hash of its home) prints as plainly as before.
 */
import { defaultDaemonName, type MaestroConfig } from '../config/config.js';
import { oneLine } from '../lib/visible.js';

/** The name, as one line of text (a name is any text config.json gives), or null. */
export function terminalName(config: Pick<MaestroConfig, 'name' | 'home' | 'database'>): string | null {
  return config.database.startsWith('postgres') || config.name !== defaultDaemonName(config.home) ? oneLine(config.name) : null;
}
