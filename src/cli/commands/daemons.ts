/**
 * `maestro daemons`: the daemons that share this daemon's database (GET /api/daemons), live and stale, where each
 * runs, and the settings that differ from the asked daemon's: a different lease, agent sandbox or Maestro version
 * makes the same task behave apart depending on which daemon claimed it. Names, hosts and homes come from the
 * database (any daemon wrote them): printed through printText, never run by the terminal.
 */
import type { Command } from 'commander';
import type { DaemonSettings } from '../../core/daemonSettings.js';
import { CLOCK_SKEW_WORTH_SAYING_MS, settingText } from '../../core/daemonText.js';
import type { DaemonEntry, DaemonList } from '../../api/wire/daemons.js';
import { oneLine } from '../../lib/visible.js';
import { action, printJson } from '../output.js';
import type { CliContext } from '../context.js';
import { clientFor, print, table, withApi, type ClientFlags } from './common.js';

/** A setting as the listing says it: durations in seconds; on one line, as another daemon wrote it (a version is any text). */
function shown(key: keyof DaemonSettings, value: DaemonSettings[keyof DaemonSettings]): string {
  return oneLine(settingText(key, value));
}

function localTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** One column of a setting: its value, marked `!` where it differs from the asked daemon's. */
function cell(d: DaemonEntry, key: keyof DaemonSettings): string {
  if (!d.settings) return '?';
  return `${shown(key, d.settings[key])}${d.differs.includes(key) ? '!' : ''}`;
}

/**
 * Ages are by the database's clock (PostgreSQL's now()): said only when the asked daemon's clock is off from it by
 * seconds, as the one reason a person comparing LAST HEARD or STARTED with their own clock would find them off.
 */
export function clockSkewLine(list: Pick<DaemonList, 'self' | 'clockSkewMs'>): string {
  if (list.clockSkewMs === null || Math.abs(list.clockSkewMs) < CLOCK_SKEW_WORTH_SAYING_MS) return '';
  const s = Math.round(Math.abs(list.clockSkewMs) / 1000);
  return `Ages are by the database's clock: ${oneLine(list.self)}'s clock is ${s} s ${list.clockSkewMs > 0 ? 'ahead of' : 'behind'} it.\n`;
}

/** The listing: a table, then a line for each daemon whose settings differ or are not known. */
export function daemonsText(list: DaemonList): string {
  if (!list.daemons.length) return `No daemon is registered on this database (asked ${oneLine(list.self)}, which has not registered yet).\n`;
  const rows = list.daemons.map((d) => [
    `${oneLine(d.name)}${d.self ? ' (this one)' : ''}`,
    d.state,
    oneLine(d.host),
    String(d.pid),
    localTime(d.startedAt),
    `${Math.round(d.lastHeardMsAgo / 1000)} s ago`,
    String(d.runsInFlight),
    cell(d, 'version'),
    cell(d, 'leaseMs'),
    cell(d, 'agentSandbox'),
    cell(d, 'maxConcurrentRuns'),
  ]);
  let out = table([['NAME', 'STATE', 'HOST', 'PID', 'STARTED', 'LAST HEARD', 'RUNNING', 'VERSION', 'LEASE', 'SANDBOX', 'RUNS'], ...rows]);
  const self = oneLine(list.self);
  for (const d of list.daemons) {
    const name = oneLine(d.name);
    if (d.unreadable) out += `${name}: its stored settings could not be read (${oneLine(d.unreadable)}).\n`;
    else if (!d.settings) out += `${name}: settings not known (a Maestro from before daemons registered them).\n`;
    else if (d.differs.length) {
      const said = d.differs.map((k) => `${k} ${shown(k, d.settings![k])} (${self}: ${shown(k, list.settings[k])})`);
      out += `${name} differs from ${self} (marked !): ${said.join(', ')}.\n`;
    }
  }
  const skew = clockSkewLine(list);
  if (skew) out += skew;
  const stale = list.daemons.filter((d) => d.state === 'stale');
  if (stale.length) out += `Stale: ${stale.map((d) => oneLine(d.name)).join(', ')} (no heartbeat for three leases: killed, or cut off from the database; its tasks go back to ready when their leases end).\n`;
  return out;
}

export function register(program: Command, ctx: CliContext): void {
  withApi(program.command('daemons').description("List the daemons sharing this daemon's database (live, and stale in the last day): host, pid, start, last heartbeat (by the database's clock), runs in flight, and the settings that differ from this one's.")).action(
    action(async (opts: ClientFlags) => {
      const list = await clientFor(opts, ctx.env).get<DaemonList>('/api/daemons');
      if (opts.json) return printJson(list);
      print(daemonsText(list));
    }),
  );
}
