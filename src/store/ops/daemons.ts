/**
 * The daemon registry and the per-project merge lease, for several daemons on
 * one database. A name is held while its heartbeat is fresh; a second daemon
 * with a live name is refused at start. The merge lease is a compare-and-set
 * on one row: taken when free, expired, or already ours.
 */
import { daemonSettingsSchema, type DaemonSettings } from '../../core/daemonSettings.js';
import { MaestroError } from '../../core/errors.js';
import type { Queryable } from '../db.js';

/** `settings`: what it runs with, for the other daemons to compare (core/daemonSettings.ts); null for none. */
export async function registerDaemon(db: Queryable, d: { name: string; host: string; pid: number; home: string; now: number; staleMs: number; settings?: DaemonSettings | null }): Promise<void> {
  const rows = await db.all<{ name: string }>(
    `INSERT INTO daemons (name, host, pid, home, started_at, heartbeat_at, settings) VALUES ($1, $2, $3, $4, $5, $5, $7)
     ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, home = excluded.home, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, settings = excluded.settings
     WHERE daemons.heartbeat_at < $6 OR (daemons.host = excluded.host AND daemons.home = excluded.home)
     RETURNING name`,
    [d.name, d.host, d.pid, d.home, d.now, d.now - d.staleMs, d.settings ? JSON.stringify(d.settings) : null],
  );
  if (rows.length) return;
  const other = await db.one<{ host: string; pid: number; home: string; heartbeat_at: number }>(`SELECT host, pid, home, heartbeat_at FROM daemons WHERE name = $1`, [d.name]);
  throw new MaestroError(
    'CONFIG_INVALID',
    `Another daemon named "${d.name}" is alive on this database (host ${other?.host}, pid ${other?.pid}, home ${other?.home}, last heartbeat ${Math.round((d.now - Number(other?.heartbeat_at ?? 0)) / 1000)} s ago). Give this one another name with --name or MAESTRO_NAME.`,
    { details: { name: d.name } },
  );
}

export async function beatDaemon(db: Queryable, name: string, now: number): Promise<void> {
  await db.run(`UPDATE daemons SET heartbeat_at = $1 WHERE name = $2`, [now, name]);
}

/** When the daemon of that name last beat its heartbeat; null when none of that name runs (a stop takes its name off). */
export async function daemonLastHeard(db: Queryable, name: string): Promise<number | null> {
  const row = await db.one<{ heartbeat_at: number }>(`SELECT heartbeat_at FROM daemons WHERE name = $1`, [name]);
  return row ? Number(row.heartbeat_at) : null;
}

/** A daemon of the registry, with its settings as read back (null: none stored, or `unreadable` says why not). */
export interface RegisteredDaemon {
  name: string;
  host: string;
  pid: number;
  home: string;
  startedAt: number;
  heartbeatAt: number;
  settings: DaemonSettings | null;
  /** Why the stored settings were not taken (not JSON, or not of core/daemonSettings.ts's shape); null when they were, or none were stored. */
  unreadable: string | null;
}

/** The daemons that beat their heartbeat at `since` or later, by name. */
export async function listDaemons(db: Queryable, opts: { since: number }): Promise<RegisteredDaemon[]> {
  const rows = await db.all<{ name: string; host: string; pid: number; home: string; started_at: number; heartbeat_at: number; settings: string | null }>(
    `SELECT name, host, pid, home, started_at, heartbeat_at, settings FROM daemons WHERE heartbeat_at >= $1 ORDER BY name`,
    [opts.since],
  );
  return rows.map((r) => ({ name: r.name, host: r.host, pid: Number(r.pid), home: r.home, startedAt: Number(r.started_at), heartbeatAt: Number(r.heartbeat_at), ...readSettings(r.settings) }));
}

/** The settings column checked against the schema: a row written by another version, or by hand, may not fit. */
function readSettings(text: string | null): { settings: DaemonSettings | null; unreadable: string | null } {
  if (text === null) return { settings: null, unreadable: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { settings: null, unreadable: 'not JSON' };
  }
  const parsed = daemonSettingsSchema.safeParse(value);
  if (parsed.success) return { settings: parsed.data, unreadable: null };
  return { settings: null, unreadable: parsed.error.issues.map((i) => `${i.path.join('.') || 'settings'}: ${i.message}`).join('; ') };
}

export async function unregisterDaemon(db: Queryable, name: string): Promise<void> {
  await db.run(`DELETE FROM daemons WHERE name = $1`, [name]);
}

export async function takeMergeLease(db: Queryable, opts: { projectId: string; owner: string; now: number; leaseMs: number }): Promise<boolean> {
  const rows = await db.all<{ owner: string }>(
    `INSERT INTO merge_locks (project_id, owner, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT (project_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
     WHERE merge_locks.expires_at < $4 OR merge_locks.owner = excluded.owner
     RETURNING owner`,
    [opts.projectId, opts.owner, opts.now + opts.leaseMs, opts.now],
  );
  return rows[0]?.owner === opts.owner;
}

/** Whether another daemon holds the project's merge lease now (a read: takeMergeLease writes even when it fails). */
export async function mergeLeaseHeldElsewhere(db: Queryable, opts: { projectId: string; owner: string; now: number }): Promise<boolean> {
  return !!(await db.one(`SELECT 1 AS yes FROM merge_locks WHERE project_id = $1 AND owner <> $2 AND expires_at >= $3`, [opts.projectId, opts.owner, opts.now]));
}

export async function releaseMergeLease(db: Queryable, projectId: string, owner: string): Promise<void> {
  await db.run(`DELETE FROM merge_locks WHERE project_id = $1 AND owner = $2`, [projectId, owner]);
}

/**
 * Whether another daemon, still alive, found the task's latest merge conflict and has not started its
 * conflict run yet (it waits for its merge lease to be released, or for a free slot). The task's events
 * say it: the `merge.conflict` that daemon recorded under the lease, and no `run.started` or status change after it (event
 * ids, not clocks: the daemons' hosts may disagree on the time). A daemon that died owes nothing.
 */
export async function conflictHeldElsewhere(db: Queryable, opts: { taskId: string; me: string; now: number; staleMs: number }): Promise<boolean> {
  const found = await db.one<{ id: number | string; payload: string }>(`SELECT id, payload FROM events WHERE task_id = $1 AND type = 'merge.conflict' ORDER BY id DESC LIMIT 1`, [opts.taskId]);
  if (!found) return false;
  const owner = (JSON.parse(found.payload) as { owner?: unknown }).owner;
  if (typeof owner !== 'string' || owner === opts.me) return false;
  // Its run started, or the task moved on (a person was asked instead, then retried it): nothing is owed.
  const after = await db.one(`SELECT 1 AS yes FROM events WHERE task_id = $1 AND type IN ('run.started', 'task.status') AND id > $2 LIMIT 1`, [opts.taskId, found.id]);
  if (after) return false;
  return !!(await db.one(`SELECT 1 AS yes FROM daemons WHERE name = $1 AND heartbeat_at >= $2`, [owner, opts.now - opts.staleMs]));
}
