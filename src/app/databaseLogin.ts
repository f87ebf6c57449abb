/**
 * The daemon's PostgreSQL must ask its role for a password over TCP: checked before the home is made or touched.
 *
 * The agent sandbox shares the machine's network (agents reach their model) and hides only the Unix socket's
 * folder, so a server that trusts 127.0.0.1 (plain `initdb` does) lets a sandboxed agent log in as the daemon
 * and rewrite the store: approve its own task. `maestro serve` refuses such a database unless config.json's
 * `allowPasswordlessDatabase` (or MAESTRO_ALLOW_PASSWORDLESS_DATABASE=1) says the person wants it; `maestro
 * doctor` fails the same check (passwordlessProblem). A server that cannot be asked is left to the store's own
 * connection, which says why it cannot open.
 */
import type { MaestroConfig } from '../config/config.js';
import { MaestroError } from '../core/errors.js';
import { probePasswordlessLogin } from '../store/passwordlessLogin.js';

const FIX =
  'Give the role a password (ALTER ROLE <role> PASSWORD \'…\'), put it in the database URL (postgres://<role>:<password>@host/db), ' +
  'set the `host` lines of pg_hba.conf to scram-sha-256 and reload PostgreSQL';
export const OPT_OUT = 'To run on it anyway (agents run unsandboxed on purpose, and nobody else uses this machine), set "allowPasswordlessDatabase": true in config.json or MAESTRO_ALLOW_PASSWORDLESS_DATABASE=1';

/** What is wrong, and how to fix it, when the probe got in at `url` (no password in it) with no password. */
export function passwordlessProblem(url: string): string {
  return `PostgreSQL at ${url} lets the daemon's role in with no password over TCP: anyone on this machine, sandboxed agents included (they share its network), can rewrite the store, and approve their own tasks. ${FIX}.`;
}

export async function refusePasswordlessDatabase(config: Pick<MaestroConfig, 'database' | 'allowPasswordlessDatabase'>, env: NodeJS.ProcessEnv): Promise<void> {
  if (!config.database.startsWith('postgres') || config.allowPasswordlessDatabase) return;
  const found = await probePasswordlessLogin(config.database, { env });
  if (found.state === 'passwordless') throw new MaestroError('CONFIG_INVALID', `Refusing to start: ${passwordlessProblem(found.url)} ${OPT_OUT}.`);
}
