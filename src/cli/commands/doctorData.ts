/**
 * `maestro doctor`'s checks of the data: the home must be writable (a
 * read-only home or a full disk is a fail naming it), the SQLite database
 * must be a sound SQLite file (header and PRAGMA quick_check; an empty file
 * beside earlier work is the lost-database case the daemon refuses), its
 * write-ahead log must be one the daemon's start takes (store/walCheck.ts; only
 * read: doctor never copies, cuts or moves it), and a running daemon's own
 * health conditions (/api/health) are reported.
 */
import { statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { networkSaid, socketsWarning } from '../../core/daemonText.js';
import { earlierData, fileSize, sqlitePath } from '../../daemon/homeCheck.js';
import { redactUrl } from '../../core/redact.js';
import { inspectSqliteFile } from '../../store/sqliteFaults.js';
import { damagedWalMessage, inspectWal } from '../../store/walCheck.js';
import type { ApiClient } from '../../api/client.js';
import type { DoctorCheck } from './doctorCheck.js';

const MIB = 1024 * 1024;

/** The folder itself, or (when it is still to be created) its nearest existing ancestor. */
function existingAncestor(dir: string): string {
  let d = dir;
  while (fileSize(d) === null && dirname(d) !== d) d = dirname(d);
  return d;
}

export function checkHome(home: string): DoctorCheck {
  const where = existingAncestor(home);
  const probe = join(where, `.maestro-probe-${process.pid}`);
  try {
    writeFileSync(probe, 'maestro');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    if (code === 'ENOSPC' || code === 'EDQUOT') return { name: 'home', status: 'fail', detail: `no space left on the disk holding ${where}: free some space; Maestro keeps its database, logs and worktrees in ${home}` };
    // As `maestro serve` says it; "remount it read-write" sent a person after the disk for a typo in MAESTRO_HOME.
    if (code === 'ENOTDIR') return { name: 'home', status: 'fail', detail: `${where} is a file, not a folder: set MAESTRO_HOME (or --home) to a folder${where === home ? '' : ` (${home} would be made inside it)`}` };
    return { name: 'home', status: 'fail', detail: `${where} is not writable (${code}): Maestro needs ${home} writable for its database, lock, logs and worktrees; remount it read-write or set MAESTRO_HOME to a writable folder` };
  } finally {
    try {
      unlinkSync(probe);
    } catch {
      // never written
    }
  }
  const created = where === home ? '' : ' (created on first start)';
  try {
    const s = statfsSync(where);
    const free = s.bavail * s.bsize;
    if (free < 64 * MIB) return { name: 'home', status: 'warn', detail: `${home}${created} is writable but its disk has only ${Math.floor(free / MIB)} MiB free: runs and worktrees need room` };
  } catch {
    // statfs is not everywhere; the write above is what matters
  }
  return { name: 'home', status: 'ok', detail: `${home}${created} is writable` };
}

export function checkDatabase(database: string, home: string): DoctorCheck {
  const path = sqlitePath(database);
  if (!path) return { name: 'database', status: 'ok', detail: database.startsWith('postgres') ? 'PostgreSQL (checked by the daemon when it connects)' : 'in memory' };
  const found = inspectSqliteFile(path);
  switch (found.state) {
    case 'missing':
      return { name: 'database', status: 'ok', detail: `${path} does not exist yet (created on first start)` };
    case 'empty': {
      const data = earlierData(home, path);
      return data.length
        ? { name: 'database', status: 'fail', detail: `${path} is empty (0 bytes) but ${home} holds earlier work (${data.join(', ')}): the database was lost; restore it from a backup, or delete it to start over on purpose` }
        : { name: 'database', status: 'ok', detail: `${path} is empty (a new home; set up on first start)` };
    }
    case 'damaged':
      return { name: 'database', status: 'fail', detail: `${path} is corrupt (${found.detail}): stop the daemon, move the file aside and restore it from a backup` };
    case 'unchecked':
      return { name: 'database', status: 'warn', detail: `could not check ${path}: ${found.detail}` };
    case 'ok':
      return { name: 'database', status: 'ok', detail: `${path} passes PRAGMA quick_check` };
    default: {
      const never: never = found;
      return never;
    }
  }
}

/**
 * The SQLite database's write-ahead log, read as the daemon's start reads it (inspectWal) and left as it is: a damaged
 * one is a fail (the daemon refuses to start), a torn one a warning (the next start keeps a copy and goes on).
 */
export function checkWal(database: string): DoctorCheck | null {
  const path = sqlitePath(database);
  if (!path) return null;
  const wal = `${path}-wal`;
  const found = inspectWal(path);
  switch (found.state) {
    case 'none':
      return { name: 'database log', status: 'ok', detail: `no write-ahead log beside ${path} (nothing waits to be copied into it)` };
    case 'ok':
      return { name: 'database log', status: 'ok', detail: `${wal} has a sound header and whole frames` };
    case 'damaged':
      return { name: 'database log', status: 'fail', detail: damagedWalMessage(path, found.detail, 'the daemon does not start with it (DATABASE_CORRUPT)') };
    case 'torn':
      return {
        name: 'database log',
        status: 'warn',
        detail:
          `The write-ahead log ${wal} ends ${found.extra} bytes into a frame (${found.size} bytes: ${found.whole} whole frames of ${found.frameBytes}). ` +
          `The next start keeps a copy of it as found (${wal}.torn-<time>) and opens the database with every whole transaction before that point: after a crash, the one cut short was never committed; if a copy or a disk cut the file short, restore both files from a backup before starting. ` +
          `A running daemon may be writing that frame now: then run doctor again.`,
      };
    default: {
      const never: never = found;
      return never;
    }
  }
}

interface HealthBody {
  ok?: boolean;
  conditions?: { code: string; message: string }[];
  agentSandbox?: { kind: string; reason: string | null; unintended: boolean; sockets?: string | null; network?: 'shared' | 'proxied' | 'none' };
  database?: string;
}

/**
 * A running daemon's own conditions (a full disk, a read-only home) and how it runs agents; nothing when none answers.
 * `configured`: the database these settings name (undefined when they do not load), which the checks above looked at:
 * a daemon started with another (`serve --database` elsewhere, a service's environment) is said, so those checks are not
 * taken for the daemon's.
 */
export async function checkDaemonHealth(client: ApiClient, configured?: string): Promise<DoctorCheck[]> {
  let body: HealthBody;
  try {
    body = await client.get<HealthBody>('/api/health');
  } catch {
    return [];
  }
  const conditions = body.conditions ?? [];
  const health: DoctorCheck[] = conditions.length === 0
    ? [{ name: 'daemon health', status: 'ok', detail: `the daemon at ${client.baseUrl} reports no problems` }]
    : conditions.map((c) => ({ name: 'daemon health', status: 'fail' as const, detail: `${c.code}: ${c.message}` }));
  const named = configured && ourDatabase(configured);
  const theirs = body.database && daemonDatabase(body.database);
  if (named && theirs && theirs !== named) {
    health.push({ name: 'daemon database', status: 'warn', detail: `the daemon at ${client.baseUrl} uses ${theirs}, not ${named}, which these settings name and the database check above looked at: give doctor the daemon's database (--database or MAESTRO_DATABASE) to check that one` });
  }
  const s = body.agentSandbox;
  if (!s) return health;
  const sandbox: DoctorCheck = s.kind === 'bwrap'
    ? { name: 'daemon agent sandbox', status: s.sockets ? 'warn' : 'ok', detail: `the daemon at ${client.baseUrl} runs agents and checks in the bwrap sandbox, ${networkSaid(s.network)}${s.sockets ? `, but ${socketsWarning(s.sockets)}` : ''}` }
    : { name: 'daemon agent sandbox', status: s.unintended ? 'warn' : 'ok', detail: `the daemon at ${client.baseUrl} runs agents and checks as its user, unsandboxed: ${s.reason}` };
  return [...health, sandbox];
}

/** The database these settings name, written as `/api/health` writes the daemon's: a SQLite path made absolute, a password as `***`. */
function ourDatabase(url: string): string {
  const path = sqlitePath(url);
  return path ? `sqlite:${resolve(path)}` : redactUrl(url);
}

/** The daemon's database as it reports it; undefined for a relative SQLite path, which is the daemon's own folder's and not compared from here. */
function daemonDatabase(reported: string): string | undefined {
  const path = sqlitePath(reported);
  return !path || isAbsolute(path) ? reported : undefined;
}
