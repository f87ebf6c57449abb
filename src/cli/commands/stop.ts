/**
 * `maestro stop`: stops the running daemon as its first SIGTERM (or Ctrl-C) does, from any terminal. It asks the
 * daemon the CLI finds (--url, MAESTRO_URL, else the daemon of $MAESTRO_HOME) through POST /api/daemon/stop, then
 * waits until that daemon has exited: its running stages get their grace (30 s), finished results are applied and
 * tasks between stages are released to other daemons on a shared database (daemon/handOver.ts). The stop is followed
 * (?follow=true: JSON lines) until the daemon says its hand-over is done: a daemon on another host closed its port
 * as its stop began, and `stop` returned while its tasks were still held. Then, on this host, the wait ends when its
 * process is gone (its home lock released with it) and its port closed; on another, when its port no longer
 * answers. An answer that ends before the hand-over is said done, or a timeout, says what the daemon said last. No
 * daemon answering: said, exit 1, nothing else done.
 */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import type { ApiClient } from '../../api/client.js';
import type { DaemonStop, StopProgressLine } from '../../api/wire/daemons.js';
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

/** What the daemon said last of its stop, in words. */
function phaseWords(line: StopProgressLine | null): string {
  if (!line) return 'nothing after its first answer';
  switch (line.phase) {
    case 'finishing-stages':
      return `finishing its running stages (${line.runsRunning} still running)`;
    case 'handing-over':
      return 'handing its tasks over (applying finished results, releasing the tasks it held between stages)';
    case 'handed-over':
      return 'its hand-over was done';
    default: {
      const never: never = line.phase;
      return never;
    }
  }
}

/**
 * Asks the daemon to stop and follows it (JSON lines) until it says its hand-over is done, within `deadline`. A
 * daemon that answers with one JSON object (one from before the follow) is waited for as before: by its exit.
 */
async function stopFollowed(client: ApiClient, deadline: number, started: (stop: DaemonStop) => void): Promise<DaemonStop> {
  const res = await client.raw('POST', '/api/daemon/stop', { query: { follow: 'true' }, signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
  if (/^application\/json\b/i.test(res.headers.get('content-type') ?? '')) {
    const stop = (await res.json()) as DaemonStop;
    started(stop);
    return stop;
  }
  let stop: DaemonStop | null = null;
  let last: StopProgressLine | null = null;
  let rest = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
      rest = lines.pop() ?? '';
      for (const text of lines.filter(Boolean)) {
        const line = JSON.parse(text) as DaemonStop | StopProgressLine;
        if ('stopping' in line) started((stop = line));
        else last = line;
        if (stop && last?.phase === 'handed-over') return stop;
      }
    }
  } catch (err) {
    const name = (err as Error).name;
    if (name !== 'TimeoutError' && name !== 'AbortError') throw unconfirmed(client, stop, last, err);
    const where = stop ? `pid ${stop.pid} on ${stop.host}` : client.baseUrl;
    throw new MaestroError('STOP_TIMEOUT', `The daemon (${where}) has not finished its hand-over in the time given; last it said: ${phaseWords(last)}. It goes on stopping. Wait longer (--timeout)${stop ? `, or kill ${stop.pid} to stop it at once (its running workers are adopted by the next start)` : ''}.`, { details: { phase: last?.phase ?? null } });
  }
  throw unconfirmed(client, stop, last);
}

/** The answer ended before the daemon said its hand-over was done: killed, crashed, or its host cut off. */
function unconfirmed(client: ApiClient, stop: DaemonStop | null, last: StopProgressLine | null, cause?: unknown): MaestroError {
  const where = stop ? `pid ${stop.pid} on ${stop.host}` : client.baseUrl;
  return new MaestroError('STOP_UNCONFIRMED', `The daemon (${where}) stopped answering before it said its hand-over was done; last it said: ${phaseWords(last)}. It may have been killed or cut off: tasks it still held go back to ready when their leases end (\`maestro daemons\` on another daemon lists it as stale).`, { cause, details: { phase: last?.phase ?? null } });
}

export function register(program: Command, ctx: CliContext): void {
  withApi(program.command('stop').description('Stop the running daemon as Ctrl-C in its terminal does (running stages finish, up to 30 s), and wait until it has exited.'))
    .option('--timeout <seconds>', `how long to wait for the daemon to exit (default ${DEFAULT_TIMEOUT_S})`, parseTimeout)
    .action(
      action(async (opts: ClientFlags & { timeout?: number }) => {
        refuseIfNoneRuns(opts, ctx.env);
        const client = clientFor(opts, ctx.env);
        const timeoutS = opts.timeout ?? DEFAULT_TIMEOUT_S;
        const deadline = Date.now() + timeoutS * 1000;
        let stop: DaemonStop;
        try {
          stop = await stopFollowed(client, deadline, (s) => process.stderr.write(`maestro: stopping the daemon at ${client.baseUrl} (pid ${s.pid} on ${s.host}): its running stages get up to ${s.graceMs / 1000} s to finish; waiting up to ${timeoutS} s for it to exit…\n`));
        } catch (err) {
          throw isMaestroError(err) && err.code === 'DAEMON_UNREACHABLE' ? nothingAnswers(client.baseUrl, ctx.env, err) : err;
        }
        if (!(await waitForExit(stop, client.baseUrl, Math.max(0, deadline - Date.now())))) {
          throw new MaestroError('STOP_TIMEOUT', `The daemon (pid ${stop.pid} on ${stop.host}) has not exited after ${timeoutS} s; it goes on stopping. Wait longer (--timeout), or kill ${stop.pid} to stop it at once (its running workers are adopted by the next start).`, { details: { pid: stop.pid, host: stop.host } });
        }
        if (opts.json) return printJson({ stopped: true, pid: stop.pid, host: stop.host, home: stop.home, url: client.baseUrl });
        print(`Daemon stopped (pid ${stop.pid}); ${stop.home} is free for the next \`maestro serve\`.`);
      }),
    );
}
