/**
 * What the API-backed commands share: the --url / --json options, a client
 * built from them, project lookup by id or name, and plain-text tables.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import type { Project, Task } from '../../core/types.js';
import { ApiClient, findProject } from '../../api/client.js';
import { readTimeoutMs, type Env } from '../../config/env.js';
import { printText } from '../output.js';
import type { ProjectList } from '../../api/wire/responses.js';

export interface ClientFlags {
  url?: string;
  json?: boolean;
}

/** Adds the options every command that talks to the daemon takes. */
export function withApi(cmd: Command): Command {
  return cmd.option('--url <url>', 'daemon URL (MAESTRO_URL, else http://127.0.0.1:$MAESTRO_PORT, else the daemon of $MAESTRO_HOME, else :4300)').option('--json', 'print stable JSON on stdout');
}

/**
 * How long the CLI waits for a daemon to begin its answer to a read. Something that accepts the
 * connection and never answers (a stopped daemon, another program on the port) otherwise holds the
 * command for undici's 300 s, silently. A health check is answered at once (10 s leaves room for a
 * loaded machine); a read (a diff of a large change) gets MAESTRO_READ_TIMEOUT, a minute unless set. Writes
 * wait as long as the daemon works: a write given up on would leave the person not knowing whether it was done.
 */
const HEALTH_WAIT_MS = 10_000;

class CliClient extends ApiClient {
  constructor(
    flags: ClientFlags,
    env: Env,
    private readonly readWaitMs: number,
  ) {
    super({ url: flags.url }, env);
  }

  override async raw(method: string, path: string, options: Parameters<ApiClient['raw']>[2] = {}): Promise<Response> {
    if (options.signal || method !== 'GET') return super.raw(method, path, options);
    const ms = path === '/api/health' ? Math.min(HEALTH_WAIT_MS, this.readWaitMs) : this.readWaitMs;
    const deadline = new AbortController();
    // The reason becomes the "why" of the client's DAEMON_UNREACHABLE message.
    const timer = setTimeout(() => deadline.abort(new Error(`it accepted the connection but sent no answer within ${ms / 1000} s`)), ms);
    try {
      return await super.raw(method, path, { ...options, signal: deadline.signal });
    } finally {
      clearTimeout(timer);
    }
  }
}

export function clientFor(flags: ClientFlags, env: Env): ApiClient {
  return new CliClient(flags, env, readTimeoutMs(env));
}

// Lives with the API client: the MCP server (below the CLI) asks it too.
export { findProject } from '../../api/client.js';

/** The project named by --project, else the one whose repository holds the current folder, else the only one. */
export async function pickProject(client: ApiClient, named: string | undefined, cwd = process.cwd()): Promise<Project> {
  if (named) return (await findProject(client, named)).project;
  // An archived project is picked only by name.
  const projects = (await client.get<ProjectList>('/api/projects')).projects.filter((p) => p.archivedAt === null);
  const here = projects.filter((p) => cwd === p.repoPath || cwd.startsWith(`${p.repoPath}/`)).sort((a, b) => b.repoPath.length - a.repoPath.length)[0];
  if (here) return here;
  if (projects.length === 1) return projects[0]!;
  throw new MaestroError('BAD_INPUT', projects.length ? `Name the project with --project (one of: ${projects.map((p) => p.name).join(', ')}).` : 'No project yet: add one with `maestro project add <path>`.');
}


/** Left-aligned columns; the last column is not padded. */
export function table(rows: string[][]): string {
  if (!rows.length) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')}\n`;
}

export function taskRow(t: Task): string[] {
  return [t.id, t.status, `P${t.priority}`, t.complexity, t.title];
}

/** A line (or lines) of human output, ended by a line break (printText shows its control characters). */
export function print(text: string): void {
  printText(text.endsWith('\n') ? text : `${text}\n`);
}

/** Splits "a,b, c" into ["a","b","c"]. */
export function list(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/** A task's priority as `task create` and `task edit` take it: 0, 1 or 2, with or without the P. */
export function parsePriority(value: string): number {
  const m = /^[Pp]?([012])$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('priority is 0, 1 or 2 (P0 is the most urgent).');
  return Number(m[1]);
}

/**
 * What a person runs at a task's gate, as `status` and `task logs --follow` say it: look at what waits (the change at
 * exec_review, the plan at a plan or spec gate), then approve it or reject it.
 */
export function gateSteps(taskId: string, gate: string): string {
  const look = gate === 'exec_review' ? `maestro task diff ${taskId}` : `maestro task show ${taskId} (its plan)`;
  return `${look}, then maestro task approve ${taskId} (or reject --reason …)`;
}
