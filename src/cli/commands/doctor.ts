/**
 * `maestro doctor`: what Maestro needs on this machine — git, Node, SQLite,
 * agent credentials, the agent CLIs (codex, gemini, cursor, opencode:
 * installed? logged in?), the daemon's port, a writable home and a sound
 * database and write-ahead log (doctorData.ts), and a running daemon's own health conditions. One
 * line per check, ok / warn / fail; exits 1 when anything fails. Works with no daemon.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { EXIT_ERROR, action, printJson } from '../output.js';
import { ApiClient } from '../../api/client.js';
import { clientFor, print } from './common.js';
import { claudeConfigDir } from '../../config/env.js';
import { bindError } from '../../lib/bindProbe.js';
import type { MaestroConfig } from '../../config/config.js';
import type { DoctorCheck } from './doctorCheck.js';
import type { CliContext } from '../context.js';

export type { DoctorCheck } from './doctorCheck.js';

function checkGit(): DoctorCheck {
  try {
    const out = execFileSync('git', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(out) ?? []).slice(1).map(Number);
    // Worktrees (one per task) need git 2.5; `git worktree remove` needs 2.17.
    if (major < 2 || (major === 2 && minor < 17)) return { name: 'git', status: 'fail', detail: `${out}: Maestro needs git 2.17 or newer` };
    return { name: 'git', status: 'ok', detail: out };
  } catch {
    return { name: 'git', status: 'fail', detail: 'git is not installed or not on PATH' };
  }
}

function checkNode(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20 ? { name: 'node', status: 'ok', detail: `Node ${process.versions.node}` } : { name: 'node', status: 'fail', detail: `Node ${process.versions.node}: Maestro needs Node 20 or newer` };
}

async function checkSqlite(): Promise<DoctorCheck> {
  try {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(':memory:');
    const { v } = db.prepare('select sqlite_version() as v').get() as { v: string };
    db.close();
    return { name: 'sqlite', status: 'ok', detail: `better-sqlite3 loads (SQLite ${v})` };
  } catch (err) {
    return { name: 'sqlite', status: 'fail', detail: `better-sqlite3 does not load: ${(err as Error).message.split('\n')[0]}; reinstall with npm rebuild better-sqlite3` };
  }
}

function checkCredentials(env: NodeJS.ProcessEnv): DoctorCheck {
  if (env.ANTHROPIC_API_KEY) return { name: 'agent credentials', status: 'ok', detail: 'ANTHROPIC_API_KEY is set' };
  if (env.CLAUDE_CODE_OAUTH_TOKEN) return { name: 'agent credentials', status: 'ok', detail: 'CLAUDE_CODE_OAUTH_TOKEN is set' };
  const claudeDir = claudeConfigDir(env);
  if (existsSync(join(claudeDir, '.credentials.json'))) return { name: 'agent credentials', status: 'ok', detail: `Claude login found in ${claudeDir}` };
  return { name: 'agent credentials', status: 'warn', detail: 'no ANTHROPIC_API_KEY and no Claude login (~/.claude): the claude provider cannot run; the scripted provider and the demo still work' };
}

async function checkPort(client: ApiClient): Promise<DoctorCheck> {
  if (await client.ping()) return { name: 'port', status: 'ok', detail: `a Maestro daemon answers at ${client.baseUrl}` };
  const url = new URL(client.baseUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const err = await bindError(host, port);
  if (!err) return { name: 'port', status: 'ok', detail: `port ${port} on ${host} is free (no daemon running; start one with maestro serve)` };
  if (err.code === 'EADDRINUSE') return { name: 'port', status: 'fail', detail: `port ${port} on ${host} is in use by something that is not a Maestro daemon; stop it or use --port / MAESTRO_PORT` };
  return { name: 'port', status: 'warn', detail: `no daemon answers at ${client.baseUrl}, and this machine cannot bind ${host}:${port} (${err.code ?? err.message})` };
}

/** The checks of the settings, and the database they name (none when they do not load). */
async function checkConfig(env: NodeJS.ProcessEnv, database: string | undefined): Promise<{ checks: DoctorCheck[]; database?: string }> {
  // Loaded here so that other commands do not pay for zod.
  const { resolveConfig } = await import('../../config/config.js');
  let c: MaestroConfig;
  try {
    c = resolveConfig({ database }, env);
  } catch (err) {
    return { checks: [{ name: 'config', status: 'fail', detail: (err as Error).message }] };
  }
  const { checkDatabase, checkHome, checkWal } = await import('./doctorData.js');
  const wal = checkWal(c.database);
  const login = c.database.startsWith('postgres') ? [await checkDatabaseLogin(c, env)] : [];
  return { database: c.database, checks: [{ name: 'config', status: 'ok', detail: `home ${c.home}, database ${c.database.startsWith('postgres') ? 'PostgreSQL' : c.database}` }, checkHome(c.home), ...(wal ? [wal] : []), checkDatabase(c.database, c.home), ...login, await checkAgentSandbox(c, env)] };
}

/** Whether the PostgreSQL lets the daemon's role in with no password over TCP: serve refuses it unless allowed (app/databaseLogin.ts). */
async function checkDatabaseLogin(config: MaestroConfig, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const { OPT_OUT, passwordlessProblem } = await import('../../app/databaseLogin.js');
  const { probePasswordlessLogin } = await import('../../store/passwordlessLogin.js');
  const found = await probePasswordlessLogin(config.database, { env });
  const name = 'database password';
  switch (found.state) {
    case 'passwordless': {
      const problem = passwordlessProblem(found.url);
      return config.allowPasswordlessDatabase ? { name, status: 'warn', detail: `${problem} Allowed by allowPasswordlessDatabase.` } : { name, status: 'fail', detail: `${problem} ${OPT_OUT}; serve refuses to start until then.` };
    }
    case 'refused':
      return { name, status: 'ok', detail: `no login without a password over TCP: ${found.detail}` };
    case 'unknown':
      return { name, status: 'warn', detail: `could not check whether PostgreSQL asks for a password: ${found.detail}` };
    default: {
      const never: never = found;
      return never;
    }
  }
}

/** Whether a daemon started here runs agents in the sandbox: a warning when it would not and nobody said so, a failure when it would not start. */
async function checkAgentSandbox(config: MaestroConfig, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const [{ settleAgentSandbox }, { networkSaid, socketsWarning }] = await Promise.all([import('../../app/agentSandbox.js'), import('../../core/daemonText.js')]);
  try {
    const { state } = settleAgentSandbox(config, env);
    if (state.kind === 'bwrap' && state.sockets) return { name: 'agent sandbox', status: 'warn', detail: `agents and checks run in the bwrap sandbox, ${networkSaid(state.network, state.upstream)}, but ${socketsWarning(state.sockets)}` };
    if (state.kind === 'bwrap') return { name: 'agent sandbox', status: 'ok', detail: `agents and checks run in the bwrap sandbox, ${networkSaid(state.network, state.upstream)}` };
    return { name: 'agent sandbox', status: state.unintended ? 'warn' : 'ok', detail: `agents and checks run as you, unsandboxed: ${state.reason}` };
  } catch (err) {
    return { name: 'agent sandbox', status: 'fail', detail: (err as Error).message };
  }
}

/** One line per agent CLI: a tool that is not installed is fine (it is optional); one installed but logged out is a warning. */
async function checkAgentTools(env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const { detectAgents } = await import('../../agents/detect.js');
  return (await detectAgents(env)).filter((a) => a.kind !== 'claude').map((a) => ({
    name: `agent ${a.kind}`,
    status: !a.installed || a.loggedIn !== false ? 'ok' : 'warn',
    detail: a.installed ? `${a.name} at ${a.path}; ${a.loggedIn ? 'logged in' : a.loggedIn === false ? 'NOT logged in' : 'login unknown'} (${a.detail})` : `${a.name} is not installed (no ${a.executable} on PATH; optional)`,
  }));
}

/** `database`: the URL the daemon was started with (`serve --database`), when not in MAESTRO_DATABASE or config.json. */
export async function runDoctor(client: ApiClient, env: NodeJS.ProcessEnv, database?: string): Promise<DoctorCheck[]> {
  const { checkDaemonHealth } = await import('./doctorData.js');
  const config = await checkConfig(env, database);
  return [checkGit(), checkNode(), await checkSqlite(), ...config.checks, checkCredentials(env), ...(await checkAgentTools(env)), await checkPort(client), ...(await checkDaemonHealth(client, config.database))];
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description('Check git, Node, SQLite, the home and database, agent credentials, the agent CLIs (codex, gemini, cursor-agent, opencode), the daemon port and health; exit 1 if anything fails. Works with no daemon.')
    .option('--url <url>', 'daemon URL to check (MAESTRO_URL, else http://127.0.0.1:$MAESTRO_PORT, else the daemon of $MAESTRO_HOME, else :4300)')
    .option('--database <url>', 'the database the daemon uses, as given to serve --database (else MAESTRO_DATABASE, config.json, $MAESTRO_HOME/maestro.db)')
    .option('--json', 'print stable JSON on stdout')
    .action(
      action(async (opts: { url?: string; database?: string; json?: boolean }) => {
        const checks = await runDoctor(clientFor(opts, ctx.env), ctx.env, opts.database);
        const ok = !checks.some((c) => c.status === 'fail');
        if (opts.json) printJson({ ok, checks });
        else for (const c of checks) print(`${c.status.padEnd(5)} ${c.name}: ${c.detail}`);
        if (!ok) process.exitCode = EXIT_ERROR;
      }),
    );
}
