/**
 * Configuration, resolved once and passed down (STYLE §2). Sources, later ones
 * winning: the defaults (defaults.ts), `$MAESTRO_HOME/config.json`, environment
 * variables, command-line flags. Validated in one place with zod; a bad value
 * is refused with the file or variable that holds it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { MaestroError } from '../core/errors.js';
import { DEFAULTS } from './defaults.js';

export { DEFAULTS };

const fileSchema = z
  .object({
    name: z.string().min(1).max(200),
    host: z.string().min(1),
    port: z.number().int().min(0).max(65535),
    database: z.string().min(1),
    token: z.string().min(8),
    leaseMs: z.number().int().positive(),
    tickMs: z.number().int().positive(),
    maxConcurrentRuns: z.number().int().positive(),
    maxConcurrentRunsPerProject: z.number().int().positive(),
    reservedConflictSlots: z.number().int().nonnegative(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  })
  .partial()
  .strict();

export type FileConfig = z.infer<typeof fileSchema>;

export interface MaestroConfig {
  home: string;
  /** This daemon's name on a shared database; its claims carry it. Unique among live daemons. */
  name: string;
  /** `sqlite:<path>` by default, or a `postgres://` URL. */
  database: string;
  host: string;
  port: number;
  token: string | null;
  leaseMs: number;
  tickMs: number;
  maxConcurrentRuns: number;
  maxConcurrentRunsPerProject: number;
  reservedConflictSlots: number;
  logLevel: (typeof DEFAULTS)['logLevel'];
}

export interface ConfigOverrides {
  home?: string;
  name?: string;
  host?: string;
  port?: number;
  database?: string;
}

/** host:hash(home): stable for a home, so a restarted daemon recognises its own claims. */
export function defaultDaemonName(home: string): string {
  return `${hostname()}:${createHash('sha1').update(home).digest('hex').slice(0, 10)}`;
}

export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.MAESTRO_HOME || join(homedir(), '.maestro'));
}

function readConfigFile(path: string): FileConfig {
  if (!existsSync(path)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', `${path} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new MaestroError('CONFIG_INVALID', `${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

function envPort(env: NodeJS.ProcessEnv): number | undefined {
  if (env.MAESTRO_PORT === undefined || env.MAESTRO_PORT === '') return undefined;
  const port = Number(env.MAESTRO_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MaestroError('CONFIG_INVALID', `MAESTRO_PORT must be a port number (0–65535), got "${env.MAESTRO_PORT}".`);
  }
  return port;
}

export function resolveConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): MaestroConfig {
  const home = overrides.home ? resolve(overrides.home) : resolveHome(env);
  const file = readConfigFile(join(home, 'config.json'));
  const database = overrides.database ?? env.MAESTRO_DATABASE ?? file.database ?? `sqlite:${join(home, 'maestro.db')}`;
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(database)) {
    throw new MaestroError('CONFIG_INVALID', `database must be "sqlite:<path>" or a postgres:// URL, got "${database}".`);
  }
  return {
    home,
    name: overrides.name ?? env.MAESTRO_NAME ?? file.name ?? defaultDaemonName(home),
    database,
    host: overrides.host ?? env.MAESTRO_HOST ?? file.host ?? DEFAULTS.host,
    port: overrides.port ?? envPort(env) ?? file.port ?? DEFAULTS.port,
    token: env.MAESTRO_TOKEN || file.token || null,
    leaseMs: file.leaseMs ?? DEFAULTS.leaseMs,
    tickMs: file.tickMs ?? DEFAULTS.tickMs,
    maxConcurrentRuns: file.maxConcurrentRuns ?? DEFAULTS.maxConcurrentRuns,
    maxConcurrentRunsPerProject: file.maxConcurrentRunsPerProject ?? DEFAULTS.maxConcurrentRunsPerProject,
    reservedConflictSlots: file.reservedConflictSlots ?? DEFAULTS.reservedConflictSlots,
    logLevel: (env.MAESTRO_LOG_LEVEL as MaestroConfig['logLevel'] | undefined) ?? file.logLevel ?? DEFAULTS.logLevel,
  };
}
