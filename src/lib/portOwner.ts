/**
 * Who listens on a loopback port, before a client sends the daemon's token there. Any local user may listen on a
 * free port of 127.0.0.1: while no daemon runs (stopped, not started yet, crashed), another user's program on
 * :4300 received `Authorization: Bearer <token>` from the first `maestro task list`, and the token stays the same
 * from one start to the next, so it could drive the daemon once that started: run agents, approve and merge, as
 * you. A process of your own user could read the token file anyway, so only a listener of another user is
 * refused. Linux says who owns each listening socket in /proc/net/tcp and tcp6 (the `uid` column); where those
 * cannot be read (macOS, a /proc without them) nothing is known and nothing is refused.
 */
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { isLoopback } from './loopback.js';
import { MaestroError } from '../core/errors.js';

/** A socket's state in /proc/net/tcp: TCP_LISTEN. */
const LISTEN = '0A';

/** An address as /proc/net/tcp prints it: each 32-bit word in hex as the host reads it (a little-endian host reverses its bytes). */
function kernelHex(bytes: number[], littleEndian: boolean): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4);
    out += (littleEndian ? word.reverse() : word).map((b) => b.toString(16).padStart(2, '0')).join('');
  }
  return out.toUpperCase();
}

/**
 * The listening addresses a connection to 127.0.0.1, localhost or ::1 may reach: those loopback addresses, the
 * wildcards (0.0.0.0, and :: which takes IPv4 too) and 127.0.0.1 mapped into IPv6.
 */
function reachedAddresses(littleEndian: boolean): Set<string> {
  const loop4 = [127, 0, 0, 1];
  const v6 = (tail: number[]) => [...new Array<number>(16 - tail.length).fill(0), ...tail];
  return new Set([loop4, [0, 0, 0, 0], v6([1]), v6([]), v6([0xff, 0xff, ...loop4])].map((a) => kernelHex(a, littleEndian)));
}

/** The uids of the sockets listening on `port` at an address a loopback client reaches, from the text of /proc/net/tcp and tcp6. */
export function loopbackListenerUids(tables: string[], port: number, littleEndian = endianness() === 'LE'): number[] {
  const reached = reachedAddresses(littleEndian);
  const uids: number[] = [];
  for (const table of tables) {
    for (const line of table.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
      const [, local, , state, , , , uid] = line.trim().split(/\s+/);
      if (state !== LISTEN || !local || uid === undefined) continue;
      const [address, hexPort] = local.split(':');
      if (parseInt(hexPort ?? '', 16) === port && reached.has(address!.toUpperCase())) uids.push(Number(uid));
    }
  }
  return uids;
}

/** The tables, or null where there are none to read (not Linux). */
function readTables(): string[] | null {
  const tables: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      tables.push(readFileSync(file, 'utf8'));
    } catch {
      // tcp6 is missing on a kernel without IPv6; both on another system
    }
  }
  return tables.length ? tables : null;
}

/**
 * Refuses (NOT_A_DAEMON) to send the token to `url` when it is a loopback URL and another user's program listens at
 * its port: it is not this user's daemon. Any other URL passes (what /proc says is this machine's loopback only).
 */
export function refuseForeignListener(url: URL): void {
  const uid = process.getuid?.();
  if (uid === undefined || !isLoopback(url.hostname)) return;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const tables = readTables();
  const other = tables ? loopbackListenerUids(tables, port).find((u) => u !== uid) : undefined;
  if (other === undefined) return;
  throw new MaestroError('NOT_A_DAEMON', `A program of another user (uid ${other}) listens at ${url.host}, not your daemon: the CLI sent it nothing, since the token would let it drive your daemon once one runs. Start your daemon on another port (maestro serve --port, MAESTRO_PORT) and point the CLI there, or find what holds the port (ss -ltnp 'sport = :${port}').`, { details: { listenerUid: other, port } });
}
