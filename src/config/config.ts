/**
 * Configuration, resolved once and passed down (STYLE §2). Sources, later ones
 * winning: the defaults (defaults.ts), `$MAESTRO_HOME/config.json`, environment
 * variables, command-line flags. Validated in one place with zod; a bad value
 * is refused with the file or variable that holds it.
 */
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { MaestroError } from '../core/errors.js';
import { notJsonMessage } from '../lib/jsonError.js';
import { unknownKeysIssueNote } from '../lib/unknownKeys.js';
import { NotRegularFile, readRegularFile } from '../lib/regularFile.js';
import { redactUrl } from '../core/redact.js';
import { DEFAULTS, LOG_LEVELS } from './defaults.js';
import { envPort } from './env.js';
import { resolveHome } from './home.js';
import { agentSandboxSchema, databaseHidden, resolveAgentSandbox, type AgentSandboxConfig } from './sandbox.js';

export { DEFAULTS, resolveHome };

const fileSchema = z
  .object({
    name: z.string().min(1).max(200),
    host: z.string().min(1),
    port: z.number().int().min(0).max(65535),
    database: z.string().min(1),
    token: z.string().min(8),
    // Timers have bounds Node can hold (a larger one fires at once, every millisecond) and a daemon can live with.
    leaseMs: z.number().int().min(1000).max(24 * 3600 * 1000),
    tickMs: z.number().int().min(10).max(60_000),
    maxConcurrentRuns: z.number().int().positive().max(1000),
    maxConcurrentRunsPerProject: z.number().int().positive().max(1000),
    reservedConflictSlots: z.number().int().nonnegative().max(1000),
    warmWorkers: z.number().int().nonnegative().max(64),
    workerNice: z.number().int().min(0).max(19),
    logLevel: z.enum(LOG_LEVELS),
    allowedHosts: z.array(z.string()),
    allowedOrigins: z.array(z.string()),
    agentSandbox: agentSandboxSchema,
    allowPasswordlessDatabase: z.boolean(),
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
  /** Runs this daemon has going at once, every stage and conflict run included; a stage beyond it waits for a slot. */
  maxConcurrentRuns: number;
  /** Tasks of one project this daemon holds in flight at once. */
  maxConcurrentRunsPerProject: number;
  /** Of maxConcurrentRuns, the slots new claims leave free for conflict runs. */
  reservedConflictSlots: number;
  /** Worker processes kept warm between runs (0: a fresh process per run). See src/executor/workerPool.ts. */
  warmWorkers: number;
  /**
   * The nice value (0-19) of the worker processes and so of all a run starts (the agent, its tools, git, the
   * project's checks): runs are background work, and yield the CPU to the daemon (its merges, which every
   * daemon of a shared database waits for, and the board) and to the person at the machine. 0: as the daemon.
   */
  workerNice: number;
  logLevel: (typeof DEFAULTS)['logLevel'];
  /** Host names (besides loopback and the bound host) the API answers to: a reverse proxy's name, say. Lowercase, no port. */
  allowedHosts: string[];
  /** Origins (besides the daemon's own) whose pages may call the API: `scheme://host[:port]`. */
  allowedOrigins: string[];
  /** `maestro serve --no-auth`: no token at all (loopback only). */
  noAuth: boolean;
  /** Where agents and checks run: in a bubblewrap sandbox (src/lib/sandbox.ts), or null for none. */
  agentSandbox: AgentSandboxConfig | null;
  /**
   * Start on a PostgreSQL that lets the daemon's role in over TCP with no password (src/store/passwordlessLogin.ts):
   * anyone on the machine, sandboxed agents included, can then write the store. Off: the daemon refuses to start.
   */
  allowPasswordlessDatabase: boolean;
}

export interface ConfigOverrides {
  home?: string;
  name?: string;
  host?: string;
  port?: number;
  database?: string;
  noAuth?: boolean;
}

/** host:hash(home): stable for a home, so a restarted daemon recognises its own claims. */
export function defaultDaemonName(home: string): string {
  return `${hostname()}:${createHash('sha1').update(home).digest('hex').slice(0, 10)}`;
}

function readConfigFile(path: string): FileConfig {
  if (!existsSync(path)) return {};
  let text: string;
  try {
    text = readRegularFile(path);
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', err instanceof NotRegularFile ? err.message : `${path} cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // The place only: JSON.parse's message quotes the start of the file, which may be a link to a secret.
    throw new MaestroError('CONFIG_INVALID', notJsonMessage(path, text), { details: { file: path } });
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    // Every problem at once, not the first alone: a config with three took three starts to come right.
    // A misspelt key is said with the nearest one and the ones there are (`prt`: did you mean port?).
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}${unknownKeysIssueNote(fileSchema, issue)}`);
    throw new MaestroError('CONFIG_INVALID', `${path}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** A comma-separated list from the environment, or undefined when the variable is unset. */
function envList(env: NodeJS.ProcessEnv, name: string): { values: string[]; from: string } | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  return { values: raw.split(',').map((v) => v.trim()).filter(Boolean), from: name };
}

/** `evil.example`, `maestro.example.com`, `10.0.0.5`, `[fd00::1]`: a host name as the Host header carries it, without its port. */
function hostList(list: { values: string[]; from: string } | undefined): string[] {
  return (list?.values ?? []).map((h) => {
    const host = h.toLowerCase();
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(host)) {
      throw new MaestroError('CONFIG_INVALID', `${list!.from}: "${h}" is not a host name (give the name alone, like maestro.example.com or 10.0.0.5, without scheme or port).`);
    }
    return host;
  });
}

/** `https://maestro.example.com`, `http://localhost:5173`: origins as a browser sends them. */
function originList(list: { values: string[]; from: string } | undefined): string[] {
  return (list?.values ?? []).map((o) => {
    let url: URL | null = null;
    try {
      url = new URL(o);
    } catch {
      // refused below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== o.replace(/\/$/, '').toLowerCase()) {
      throw new MaestroError('CONFIG_INVALID', `${list!.from}: "${o}" is not an origin (expected scheme://host[:port], like https://maestro.example.com, with no path).`);
    }
    return url.origin;
  });
}

/** MAESTRO_LOG_LEVEL, one of pino's levels (unset or empty: undefined); another was cast through and pino refused it at start with "default level:bogus must be included in custom levels". */
function envLogLevel(env: NodeJS.ProcessEnv): MaestroConfig['logLevel'] | undefined {
  const value = env.MAESTRO_LOG_LEVEL;
  if (value === undefined || value === '') return undefined;
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new MaestroError('CONFIG_INVALID', `MAESTRO_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value)}.`);
  return level;
}

/** A yes/no variable: 1/true/yes or 0/false/no; unset or empty: undefined. */
function envYesNo(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name]?.trim().toLowerCase();
  if (!value) return undefined;
  if (['1', 'true', 'yes'].includes(value)) return true;
  if (['0', 'false', 'no'].includes(value)) return false;
  throw new MaestroError('CONFIG_INVALID', `${name} must be 1, true, yes, 0, false or no, got ${JSON.stringify(env[name])}.`);
}

function withDatabaseHidden(sandbox: AgentSandboxConfig | null, database: string, home: string, env: NodeJS.ProcessEnv): AgentSandboxConfig | null {
  return sandbox && { ...sandbox, hide: [...sandbox.hide, ...databaseHidden(database, home, env)] };
}

/** Refuses a database URL the daemon could not open, naming where it came from (`from`) and never its password. */
function checkDatabaseUrl(database: string, from: string): void {
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(database)) {
    throw new MaestroError('CONFIG_INVALID', `${from}: database must be "sqlite:<path>" or a postgres:// URL, got "${database.includes('://') ? redactUrl(database) : database}".`);
  }
  if (database.startsWith('sqlite:')) return;
  try {
    new URL(database);
  } catch {
    // node-postgres reads it with the same URL parser, which said only "Invalid URL".
    throw new MaestroError(
      'CONFIG_INVALID',
      `${from}: "${redactUrl(database)}" is not a URL: check the port (1–65535), and percent-encode @ : / ? # % in the user or password (%40 %3A %2F %3F %23 %25), or give the password in PGPASSWORD instead.`,
    );
  }
}

export function resolveConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv): MaestroConfig {
  const home = overrides.home ? resolve(overrides.home) : resolveHome(env);
  const configPath = join(home, 'config.json');
  const file = readConfigFile(configPath);
  const database = overrides.database ?? env.MAESTRO_DATABASE ?? file.database ?? `sqlite:${join(home, 'maestro.db')}`;
  checkDatabaseUrl(database, overrides.database !== undefined ? '--database' : env.MAESTRO_DATABASE !== undefined ? 'MAESTRO_DATABASE' : `${configPath} database`);
  // As config.json's token: a short one is guessed in moments by anything that can reach the port.
  if (env.MAESTRO_TOKEN && env.MAESTRO_TOKEN.length < 8) {
    throw new MaestroError('CONFIG_INVALID', `MAESTRO_TOKEN must be at least 8 characters, got ${env.MAESTRO_TOKEN.length}. Unset it to use the random token in $MAESTRO_HOME/token.`);
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
    warmWorkers: file.warmWorkers ?? DEFAULTS.warmWorkers,
    workerNice: file.workerNice ?? DEFAULTS.workerNice,
    logLevel: envLogLevel(env) ?? file.logLevel ?? DEFAULTS.logLevel,
    allowedHosts: hostList(envList(env, 'MAESTRO_ALLOWED_HOSTS') ?? (file.allowedHosts && { values: file.allowedHosts, from: `${configPath} allowedHosts` })),
    allowedOrigins: originList(envList(env, 'MAESTRO_ALLOWED_ORIGINS') ?? (file.allowedOrigins && { values: file.allowedOrigins, from: `${configPath} allowedOrigins` })),
    noAuth: overrides.noAuth ?? false,
    agentSandbox: withDatabaseHidden(resolveAgentSandbox(file.agentSandbox, env, `${configPath} agentSandbox`), database, home, env),
    allowPasswordlessDatabase: envYesNo(env, 'MAESTRO_ALLOW_PASSWORDLESS_DATABASE') ?? file.allowPasswordlessDatabase ?? false,
  };
}
