/**
 * The environment of everything the daemon starts on a project's behalf:
 * workers, the agents and checks they run, and hooks. It is an allowlist, so a
 * secret the daemon holds (MAESTRO_TOKEN, the database URL, an embeddings key,
 * PGPASSWORD, a cloud key exported in the user's shell) never reaches an agent
 * that can run `env`. What passes:
 *   - what a program needs to run at all: PATH, HOME, the user, the locale,
 *     the terminal, temp and XDG folders, proxies and CA bundles;
 *   - the model tiers (MAESTRO_MODEL_HARD/MEDIUM/EASY): names, not secrets;
 *   - the credentials of the run's own provider (CREDENTIAL_ENV in
 *     src/agents/credentials.ts), nothing of the others;
 *   - the names the project's config lists in `passEnv` (exact names, or a
 *     prefix ending in `*`, e.g. `NPM_CONFIG_*`), for the project's own tools.
 * The daemon's own secrets never pass, whatever passEnv says: nothing named
 * MAESTRO_* but the tiers, and not the libpq password variables its PostgreSQL
 * store reads (PGPASSWORD, PGPASSFILE; `PG*` in passEnv passes the others).
 * PATH passes with its absolute folders only, HOME, the XDG and temp folders only when
 * absolute (withAbsolutePaths).
 */

const BASE = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'COLORTERM', 'NO_COLOR', 'FORCE_COLOR', 'TZ',
  'TMPDIR', 'TMP', 'TEMP', 'EDITOR', 'VISUAL',
  'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME', 'XDG_RUNTIME_DIR',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
  'SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS',
  'MAESTRO_MODEL_HARD', 'MAESTRO_MODEL_MEDIUM', 'MAESTRO_MODEL_EASY',
];
const BASE_PREFIXES = ['LC_'];
const DAEMON_DATABASE_SECRETS = ['PGPASSWORD', 'PGPASSFILE'];
/**
 * PWD names the folder the daemon was started in, never the child's own (spawning in another folder does
 * not change it): OpenCode runs its commands in $PWD, so outside the sandbox (bwrap sets PWD to the folder
 * it starts in) a passed PWD put an agent's edits in the daemon's launch folder, often the main checkout.
 */
const NEVER = 'PWD';

/**
 * PATH without its relative folders. An empty entry (`:/usr/bin`, `/usr/bin:`, `a::b`), `.` or
 * `node_modules/.bin` is looked up from the folder a program starts in, and the worker starts git and bwrap
 * in the task's worktree, which the agent writes: its `./git` ran at the worker's commit, outside the sandbox
 * and as the person, and read the daemon's token (a shell profile's `export PATH=$EXTRA:$PATH` with EXTRA
 * unset makes the first). Undefined when none is left: the spawn then takes the system's default.
 */
export function onlyAbsolute(path: string): string | undefined {
  const kept = path.split(':').filter((dir) => dir.startsWith('/'));
  return kept.length ? kept.join(':') : undefined;
}

/**
 * Variables naming a folder or file that git or a tool reads from: relative, it is read in the folder a
 * program starts in, the agent's worktree. git read `.config/git/config` there with XDG_CONFIG_HOME=.config,
 * and a `gpg.program = ./sign.sh` in it ran at the worker's commit, outside the sandbox. XDG's own rule is to
 * ignore a relative one; so are these.
 */
const FOLDER_VARS = ['HOME', 'TMPDIR', 'TMP', 'TEMP', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME', 'XDG_RUNTIME_DIR', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_EXEC_PATH', 'GIT_TEMPLATE_DIR'];

/** `env` with PATH held to its absolute folders (onlyAbsolute), and without a relative FOLDER_VARS value. */
function withAbsolutePaths(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name === 'PATH') {
      const kept = onlyAbsolute(value);
      if (kept !== undefined) out.PATH = kept;
    } else if (!FOLDER_VARS.includes(name) || value.startsWith('/')) out[name] = value;
  }
  return out;
}

/** A variable that is the daemon's own secret: it never reaches what the daemon starts for a project. */
export function isDaemonSecret(name: string): boolean {
  return (name.startsWith('MAESTRO_') && !BASE.includes(name)) || DAEMON_DATABASE_SECRETS.includes(name);
}

export interface AgentEnvOptions {
  /** The run's provider's own credential variables (src/agents/credentials.ts credentialsFor, which may look at the source): they pass. */
  credentials?: readonly string[] | ((source: NodeJS.ProcessEnv) => readonly string[]);
  /** The project's `passEnv`: exact names or `PREFIX_*`. */
  pass?: readonly string[];
}

/** A `passEnv` entry: an environment variable name, or a prefix followed by `*`. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

function passes(name: string, names: Set<string>, prefixes: string[]): boolean {
  if (names.has(name)) return true;
  return prefixes.some((p) => name.startsWith(p));
}

export function agentEnv(source: NodeJS.ProcessEnv, opts: AgentEnvOptions = {}): NodeJS.ProcessEnv {
  const credentials = typeof opts.credentials === 'function' ? opts.credentials(source) : (opts.credentials ?? []);
  const names = new Set([...BASE, ...credentials]);
  const prefixes = [...BASE_PREFIXES];
  for (const entry of opts.pass ?? []) {
    if (entry.endsWith('*')) prefixes.push(entry.slice(0, -1));
    else names.add(entry);
  }
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || !passes(name, names, prefixes)) continue;
    if (isDaemonSecret(name) || name === NEVER) continue;
    out[name] = value;
  }
  return withAbsolutePaths(out);
}

/** Set by spawnWorker on a worker whose whole environment the daemon already allowlisted for its run. */
export const RUN_DIR_ENV = 'MAESTRO_RUN_DIR';

/**
 * The environment for a child an agent provider starts (Claude Code, a command agent, an agent CLI, a
 * tool's status command). In a worker the process environment is already this run's allowlist, the
 * project's `passEnv` included, so it passes as it is; anywhere else (the observer's agent in the daemon
 * or the CLI, detection in the daemon) it is allowlisted here, with the provider's own `credentials`.
 */
export function childEnv(credentials: readonly string[], source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (!source[RUN_DIR_ENV]) return agentEnv(source, { credentials });
  const { [NEVER]: _pwd, ...env } = source;
  return withAbsolutePaths(env);
}

/*
 * This module is where Maestro reads its own process environment to build a child's: a child's
 * environment is made from the parent's, so the filter has to see it (src/config/env.test.ts allows
 * this file and names why). Everything else takes `env` from its entry point.
 */

/** agentEnv over this process's environment: what the daemon hands a worker, a hook or git. */
export function processAgentEnv(opts: AgentEnvOptions = {}): NodeJS.ProcessEnv {
  return agentEnv(process.env, opts);
}

/** A warm worker runs one run at a time in process: the run's folder is set for what its agent starts, then cleared. */
export function setRunDir(runDir: string | null): void {
  if (runDir === null) delete process.env[RUN_DIR_ENV];
  else process.env[RUN_DIR_ENV] = runDir;
}
