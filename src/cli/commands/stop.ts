/**
 * `maestro stop`: stops the running daemon as its first SIGTERM (or Ctrl-C) does, from any terminal. It asks the
 * daemon the CLI finds (--url, MAESTRO_URL, else the daemon of $MAESTRO_HOME) through POST /api/daemon/stop, then
 * waits until that daemon has exited: its running stages get their grace (30 s), finished results are applied and
 * tasks between stages are released to other daemons on a shared database (daemon/handOver.ts). On this host the
 * wait ends when its process is gone (its home lock released with it) and its port closed; a daemon on another host
 * is watched until its port no longer answers. No daemon answering: said, exit 1, nothing else done.
 */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import type { DaemonStop } from '../../api/wire/daemons.js';
import { daemonUrlFromEnv, envPort, type Env } from '../../config/env.js';
import { resolveHome } from '../../config/home.js';
import { MaestroError, isMaestroError } from '../../core/errors.js';
import { homeInUse } from '../../daemon/homeLock.js';
import { integerOption } from '../input.js';
import { action, printJson } from '../output.js';
import type { CliContext } from '../context.js';
import { clientFor, print, withApi, type ClientFlags } from './common.js';

/** Past the 30 s grace: applying results pushes branches and a shared database may be slow to answer. */
const DEFAULT_TIMEOUT_S = 300;
const POLL_MS = 200;

const parseTimeout = integerOption('--timeout is a number of seconds from 1 to 86400', 1, 86_400);

/** Whether a process of this host still runs (EPERM: it runs, as another user). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether anything still answers at `url` (the daemon closes its port first as it stops). */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5_000) });
    return true;
  } catch {
    return false;
  }
}

/** True once the daemon has gone (its process and port on this host, its port on another); false at the deadline. */
async function waitForExit(stop: DaemonStop, url: string, timeoutMs: number): Promise<boolean> {
  const here = stop.host === hostname();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Its port too on this host: a pid seen from another pid namespace (a container with the host's name) says nothing.
    if ((!here || !processRuns(stop.pid)) && !(await answers(url))) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Without --url, MAESTRO_URL or MAESTRO_PORT the daemon to stop is the one of $MAESTRO_HOME: with its lock free none
 * runs, and nothing is asked (the CLI's fallback, :4300, may be another home's daemon).
 */
function refuseIfNoneRuns(flags: ClientFlags, env: Env): void {
  if (flags.url || daemonUrlFromEnv(env) || envPort(env) !== undefined) return;
  const home = resolveHome(env);
  if (!homeInUse(home)) throw new MaestroError('DAEMON_NOT_RUNNING', `No Maestro daemon runs on ${home} (MAESTRO_HOME): nothing to stop.`);
}

/** No daemon answers: nothing to stop, unless this home's lock says one is starting or already stopping. */
function nothingAnswers(url: string, env: Env, cause: MaestroError): MaestroError {
  const home = resolveHome(env);
  const pid = homeInUse(home)?.details?.pid;
  if (typeof pid !== 'number') return new MaestroError('DAEMON_NOT_RUNNING', `No Maestro daemon answers at ${url}: nothing to stop.`, { cause });
  return new MaestroError('DAEMON_UNREACHABLE', `No Maestro daemon answers at ${url}, but the daemon of ${home} (pid ${pid}) holds its lock: it is starting or already stopping. Wait for it, or kill ${pid} (a second SIGTERM stops it at once).`, { cause });
}

export function register(program: Command, ctx: CliContext): void {
  withApi(program.command('stop').description('Stop the running daemon as Ctrl-C in its terminal does (running stages finish, up to 30 s), and wait until it has exited.'))
    .option('--timeout <seconds>', `how long to wait for the daemon to exit (default ${DEFAULT_TIMEOUT_S})`, parseTimeout)
    .action(
      action(async (opts: ClientFlags & { timeout?: number }) => {
        refuseIfNoneRuns(opts, ctx.env);
        const client = clientFor(opts, ctx.env);
        let stop: DaemonStop;
        try {
          stop = await client.post<DaemonStop>('/api/daemon/stop');
        } catch (err) {
          throw isMaestroError(err) && err.code === 'DAEMON_UNREACHABLE' ? nothingAnswers(client.baseUrl, ctx.env, err) : err;
        }
        const timeoutS = opts.timeout ?? DEFAULT_TIMEOUT_S;
        process.stderr.write(`maestro: stopping the daemon at ${client.baseUrl} (pid ${stop.pid} on ${stop.host}): its running stages get up to ${stop.graceMs / 1000} s to finish; waiting up to ${timeoutS} s for it to exit…\n`);
        if (!(await waitForExit(stop, client.baseUrl, timeoutS * 1000))) {
          throw new MaestroError('STOP_TIMEOUT', `The daemon (pid ${stop.pid} on ${stop.host}) has not exited after ${timeoutS} s; it goes on stopping. Wait longer (--timeout), or kill ${stop.pid} to stop it at once (its running workers are adopted by the next start).`, { details: { pid: stop.pid, host: stop.host } });
        }
        if (opts.json) return printJson({ stopped: true, pid: stop.pid, host: stop.host, home: stop.home, url: client.baseUrl });
        print(`Daemon stopped (pid ${stop.pid}); ${stop.home} is free for the next \`maestro serve\`.`);
      }),
    );
}
