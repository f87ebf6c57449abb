/** `maestro serve` (alias `start`): run the daemon in the foreground. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { integerOption } from '../input.js';
import type { FastifyInstance } from 'fastify';
import { MaestroError, isMaestroError } from '../../core/errors.js';
import { bindError } from '../../lib/bindProbe.js';
import { refusePortInUse } from '../../app/port.js';
import { terminalName } from '../../app/terminalName.js';
import { action } from '../output.js';
import type { CliContext } from '../context.js';
import type { MaestroEvent } from '../../core/types.js';
import type { Daemon } from '../../app/daemon.js';
import { oneLine } from '../../lib/visible.js';
import { autoApprovalSentence, type AutoApprovalChange } from '../../core/autoApproval.js';
import { closeInheritedDescriptors } from '../../lib/inheritedDescriptors.js';

const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['task.status', 'merge.conflict', 'merge.check', 'merge.waiting', 'merge.locked', 'run.started', 'run.adopted', 'run.resumed', 'task.taken_over', 'task.released', 'task.renewed', 'project.settings_files', 'project.runs_elsewhere', 'project.config']);

/**
 * What the terminal says of an event: a task's status change, a merge conflict, the start of the run
 * that resolves it (or that it waits for a run slot) (the demo's conflict used to show only as merging → done), a run taken over or resumed
 * after a crash (recovery said nothing), a task released by a stopping daemon, taken over at its stage from
 * another daemon or renewed by its own daemon back from being cut off (store/ops/claim.ts), a merge that changed
 * what steers later runs (hooks, checks, the knowledge briefs quote), which runs from then on, and a change of the
 * settings that run code or let work through without a person (an approval without one says so). Null for
 * anything else. Titles, branches, file names, authors and subjects come from people, agents and
 * repositories: all of it is shown as `maestro task list` shows it (oneLine), never run by the terminal. Each status
 * line is one line: a file name may hold a line break (git allows it) that would start a line reading as Maestro's
 * own. An author named `Eve\x1b[2J\x1b[H` cleared the operator's screen; a title with U+202E printed it reversed.
 */
export function terminalLine(e: Pick<MaestroEvent, 'type' | 'at' | 'payload'>, title: string): string | null {
  const said = eventText(e);
  // The title escaped before it is padded, so that the columns line up with what the terminal draws.
  return said === null ? null : `${new Date(e.at).toTimeString().slice(0, 8)}  ${oneLine(title).padEnd(32).slice(0, 32)}  ${oneLine(said)}`;
}

function eventText(e: Pick<MaestroEvent, 'type' | 'payload'>): string | null {
  // Approvals stored before their origin had a key of its own hold it in `from`: then the status left is not known.
  if (e.type === 'task.status') return `${typeof e.payload.from === 'string' ? `${e.payload.from} → ` : '→ '}${String(e.payload.to)}${typeof e.payload.reason === 'string' ? `  (${e.payload.reason})` : ''}`;
  if (e.type === 'merge.conflict') return `merge conflict on ${String(e.payload.branch)}: a conflict run will resolve it`;
  if (e.type === 'merge.locked') return `merge waits: ${String(e.payload.lock)} exists (a git process at work in the checkout); it merges once that is gone`;
  if (e.type === 'merge.check') return `${String(e.payload.branch)} is no fast-forward of main: the checks run on the merged tree before it lands (round ${String(e.payload.round)} of at most ${String(e.payload.maxRounds)})`;
  if (e.type === 'merge.waiting') return `${e.payload.kind === 'conflict' ? 'conflict run' : 'merge check'} waits for a worker: every run slot on daemon ${String(e.payload.owner)} is taken (maxConcurrentRuns); it starts when one of those runs ends`;
  if (e.type === 'run.started' && e.payload.kind === 'conflict') return 'conflict run started';
  if (e.type === 'run.started' && e.payload.kind === 'merge_check') return 'merge check started';
  if (e.type === 'run.adopted') return `${String(e.payload.kind)} run taken over: its worker (pid ${String(e.payload.pid)}) ran on while no daemon did`;
  if (e.type === 'task.taken_over') return `taken over at ${String(e.payload.status)} by ${String(e.payload.owner)} from ${String(e.payload.previousOwner)}, whose lease ended: it goes on from the work ${String(e.payload.previousOwner)} pushed`;
  if (e.type === 'task.renewed') return `lease renewed at ${String(e.payload.status)} by ${String(e.payload.owner)}, which was cut off from the database for longer than its lease: it goes on with the task, nothing taken over`;
  if (e.type === 'task.released') return `released at ${String(e.payload.status)} by ${String(e.payload.owner)}, which stopped: another daemon goes on with it now`;
  if (e.type === 'run.resumed') return `run resumed on a new worker: the last one died (restart ${String(e.payload.restart)})`;
  if (e.type === 'project.settings_files' && e.payload.remote === true) {
    // The subject in quotes, escaped as the rest (JSON's \u001b would read unlike \u{1b}, and JSON leaves U+202E raw).
    return `main changed what later runs use, not through a Maestro merge: ${fileList(e.payload.files)} (commit ${String(e.payload.sha).slice(0, 12)} by ${String(e.payload.who)}: "${String(e.payload.subject ?? '')}")`;
  }
  if (e.type === 'project.settings_files' && e.payload.promotion === true) return `knowledge promoted into main: ${fileList(e.payload.files)}`;
  if (e.type === 'project.settings_files') return `merged changes to what later runs use: ${fileList(e.payload.files)}`;
  if (e.type === 'project.config') return settingsText(e.payload);
  if (e.type === 'project.runs_elsewhere') return `merged changes to what runs outside Maestro: ${fileList(e.payload.files)} (CI runs its workflows on the next push; hooks and package scripts run where it is checked out)`;
  return null;
}

/**
 * A change of the settings that run code or let work through without a person (the event's `code`): who made it,
 * from where, the keys (a value only when it is a number, a boolean or unset), and what a change of auto-approval
 * means (core/autoApproval.ts). Null for any other change.
 */
function settingsText(payload: Record<string, unknown>): string | null {
  const code = payload.code && typeof payload.code === 'object' ? (payload.code as Record<string, { before?: unknown; after?: unknown }>) : {};
  if (!Object.keys(code).length) return null;
  const plain = (v: unknown) => v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean';
  const shown = (v: unknown) => (v === null || v === undefined ? 'unset' : String(v));
  const keys = Object.entries(code).map(([k, c]) => (plain(c?.before) && plain(c?.after) ? `${k} ${shown(c.before)} → ${shown(c.after)}` : `${k} changed`));
  const origin = (payload.from && typeof payload.from === 'object' ? payload.from : {}) as { address?: unknown; client?: unknown };
  const by = `${typeof payload.who === 'string' ? ` by ${payload.who}` : ''}${typeof origin.address === 'string' ? ` from ${origin.address}${typeof origin.client === 'string' ? ` (${origin.client})` : ''}` : ''}`;
  const approval = payload.autoApproval as AutoApprovalChange | undefined;
  return `settings changed${by}: ${keys.join(', ')}${approval && typeof approval === 'object' ? `; ${autoApprovalSentence(approval)}` : ''}`;
}

function fileList(files: unknown): string {
  const names = Array.isArray(files) ? files.filter((f): f is string => typeof f === 'string') : [];
  if (!names.length) return '(files not named)';
  return names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
}

/**
 * The bus listener that prints terminalLine for each event, naming the task by its title (read once), after the
 * daemon's name when it is given (`[build-1] 09:30:05  …`). A read
 * that fails (PostgreSQL restarting) names it by its id: the listener never rejects, since an unhandled
 * rejection ends the daemon.
 */
export function terminalPrinter(find: (taskId: string) => Promise<{ title: string } | null | undefined>, print: (line: string) => void, daemon: string | null = null): (e: MaestroEvent) => Promise<void> {
  const titles = new Map<string, string>();
  // The daemon's name first (app/terminalName.ts), when it has one to say: which of two terminals side by side this is.
  const write = daemon === null ? print : (line: string) => print(`[${oneLine(daemon)}] ${line}`);
  return async (e) => {
    if (!TERMINAL_EVENTS.has(e.type)) return;
    // A project's event (main changed on its shared remote) names the project instead of a task.
    if (!e.taskId) {
      const name = typeof e.payload.name === 'string' ? e.payload.name : e.projectId;
      const line = (e.type === 'project.settings_files' || e.type === 'project.config') && e.projectId ? terminalLine(e, `project ${name}`) : null;
      if (line) write(line);
      return;
    }
    let title = titles.get(e.taskId);
    if (!title) {
      const task = await find(e.taskId).catch(() => null);
      title = task?.title ?? e.taskId;
      if (task) titles.set(e.taskId, title);
    }
    const line = terminalLine(e, title);
    if (line) write(line);
  };
}

const parsePort = integerOption('a port is 0–65535', 0, 65535);

/**
 * What a daemon needs of its home and address, checked before it creates anything: a home that is a file
 * failed as a bare EEXIST; an address this machine does not have (a typo, another host's IP) failed only
 * at listen, after the home, its database and token were made.
 */
async function checkPlace(home: string, host: string): Promise<void> {
  if (statSync(home, { throwIfNoEntry: false })?.isDirectory() === false) throw new MaestroError('BAD_INPUT', `The home ${home} (--home, MAESTRO_HOME) is a file, not a folder.`);
  const err = await bindError(host, 0);
  if (err) throw new MaestroError('BAD_INPUT', `Cannot listen on ${JSON.stringify(host)} (--host, MAESTRO_HOST): ${err.code ?? err.message}. Give an address of this machine, e.g. 127.0.0.1 or 0.0.0.0.`);
}

/**
 * The board to serve: web/dist, built first if it is missing or stale. On an install without
 * optional dependencies the bundler cannot run: an older web/dist is served if there is one;
 * with none, the daemon starts without a board and says why, on the terminal and at `/`.
 */
async function prepareBoard(): Promise<{ routes: (app: FastifyInstance) => Promise<void>; missing: boolean }> {
  const { BUNDLER_BINDING_MISSING, boardUnavailableRoutes, ensureWebBuilt, webIsBuilt, webRoutes } = await import('../../api/web.js');
  try {
    ensureWebBuilt({ log: (line) => process.stderr.write(`${line}\n`) });
  } catch (err) {
    if (!isMaestroError(err) || err.details?.reason !== BUNDLER_BINDING_MISSING) throw err;
    process.stderr.write(`maestro: ${err.message}\n`);
    if (webIsBuilt()) {
      process.stderr.write('maestro: serving the web board built earlier (web/dist), which may be older than web/src\n');
    } else {
      return { routes: (app) => boardUnavailableRoutes(app, err.message), missing: true };
    }
  }
  return { routes: (app) => webRoutes(app), missing: false };
}

/**
 * The graceful stop of `maestro serve`, once: the daemon stops (its grace for running stages) and the process
 * exits 0 after its last log line. The first SIGTERM or Ctrl-C and `maestro stop` all come here.
 */
function gracefulStop(graceMs: number): { readonly stopping: boolean; gracefully(daemon: Pick<Daemon, 'stop'>, said: string): void } {
  let stopping = false;
  return {
    get stopping() {
      return stopping;
    },
    gracefully(daemon, said) {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`maestro: ${said}\n`);
      void daemon.stop({ graceMs }).then(() => {
        process.stderr.write('maestro: daemon stopped\n');
        process.exit(0);
      });
    },
  };
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .alias('start')
    .description('Run the Maestro daemon and web board (default http://127.0.0.1:4300).')
    .option('--host <host>', 'address to bind (default 127.0.0.1; the token is required on any address)')
    .option('--port <port>', 'port to listen on (MAESTRO_PORT)', parsePort)
    .option('--home <dir>', 'data directory (MAESTRO_HOME, default ~/.maestro)')
    .option('--database <url>', 'sqlite:<path> (default) or a postgres:// URL (MAESTRO_DATABASE)')
    .option('--name <name>', "this daemon's name on a shared database (MAESTRO_NAME; default host:hash(home))")
    .option('--no-demo', 'do not create the demo project when no project exists')
    .option('--no-auth', 'ask for no token (loopback only; any local program can then drive the daemon)')
    .action(
      action(async (opts: { host?: string; port?: number; home?: string; database?: string; name?: string; demo: boolean; auth: boolean }) => {
        // What the shell or launcher left open reaches no hook, worker or agent (lib/inheritedDescriptors.ts).
        closeInheritedDescriptors();
        const { resolveConfig } = await import('../../config/config.js');
        const config = resolveConfig({ host: opts.host, port: opts.port, home: opts.home, database: opts.database, name: opts.name, noAuth: !opts.auth }, ctx.env);
        await checkPlace(config.home, config.host);
        // startDaemon checks it too, but the board may need building first (up to a minute): a taken port is said now.
        await refusePortInUse(config);
        // Structured logs go to a file (a full disk is reported, not fatal); the terminal gets one readable line per status change.
        const logDir = join(config.home, 'logs');
        // Imported here so that other commands do not pay for loading the daemon and the web build.
        const { startDaemon } = await import('../../app/daemon.js');
        const { STOP_GRACE_MS } = await import('../../app/stopRequest.js');
        const board = await prepareBoard();
        const stops = gracefulStop(STOP_GRACE_MS);
        const daemon = await startDaemon(config, {
          // `maestro stop` (POST /api/daemon/stop): as the first SIGTERM; a signal after it stops at once.
          onStopRequest: (d) => {
            if (!stops.stopping) stops.gracefully(d, 'asked to stop by maestro stop: finishing running stages (Ctrl-C or SIGTERM to stop now)');
          },
          // The daemon's knowledge, observer and providers are configured from the environment the CLI's entry read.
          env: ctx.env,
          announce: true,
          demo: opts.demo,
          logFile: join(logDir, 'daemon.log'),
          // The web board, registered last: its fallback route takes what is left.
          plugins: [board.routes],
        });
        // The one place the token is printed: the link logs the browser in (the board's own storage) and drops the token from the address bar.
        if (board.missing) process.stderr.write(`maestro: running WITHOUT the web board; the API is at ${daemon.url}/api\n`);
        else process.stderr.write(`maestro: open the board: ${daemon.boardUrl}\n`);
        if (daemon.token) process.stderr.write(`maestro: the CLI and MCP read the token from ${config.token ? 'MAESTRO_TOKEN (or config.json), as this daemon was given' : join(config.home, 'token')}\n`);
        process.stderr.write(`maestro: logs in ${join(logDir, 'daemon.log')}; Ctrl-C stops (or maestro stop, from another terminal)\n`);
        daemon.bus.onEvent(terminalPrinter((id) => daemon.store.tasks.row(id), (line) => process.stderr.write(`${line}\n`), terminalName(config)));
        // First signal (or `maestro stop`): stop claiming and let workers finish their stage (STOP_GRACE_MS, 30 s).
        // Second signal: stop now; unfinished runs resume from stages.json on the next start.
        const onSignal = (sig: NodeJS.Signals) => {
          if (!stops.stopping) return stops.gracefully(daemon, `${sig}: finishing running stages (send it again to stop now)`);
          // Workers keep running in their own process groups; the next start adopts them.
          process.stderr.write('maestro: stopping now; running workers are adopted by the next start\n');
          process.exit(1);
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      }),
    );
}
