/**
 * A daemon's settings as the daemons of one database show them to each other (`maestro daemons`, GET /api/daemons):
 * what must agree among them or explains why they behave apart. The lease sets how long a stopped daemon's work
 * waits before another takes it over, and how soon a silent daemon counts as stale (3 leases); the agent sandbox
 * is whether a task's agent reads the host's files, which should not depend on which daemon claimed it; the version
 * is the code that claims and merges; the counts are how much work each daemon takes. Stored as one JSON column
 * (migration 011) and checked against the schema on read: a row another version wrote that does not fit is shown as
 * unreadable, never taken as settings. Pure (zod only).
 */
import { z } from 'zod';

/** Maestro's version (package.json's; daemonSettings.test.ts keeps them equal). */
export const MAESTRO_VERSION = '0.1.0';

const count = z.number().int().nonnegative();
/** A version string: any daemon (or anyone with the database) writes the row, and every listing prints it. */
const version = z.string().max(100);

export const daemonSettingsSchema = z.strictObject({
  version: version.describe("the daemon's Maestro version"),
  node: version.describe("the Node.js version it runs on (process.version)"),
  leaseMs: count.describe('how long its claims live without a heartbeat'),
  tickMs: count,
  maxConcurrentRuns: count.describe('runs (workers) it has going at once'),
  maxConcurrentRunsPerProject: count,
  reservedConflictSlots: count,
  warmWorkers: count,
  agentSandbox: z.enum(['bwrap', 'off']).describe('where its agents run: in the bwrap sandbox, or as the user'),
});

export type DaemonSettings = z.infer<typeof daemonSettingsSchema>;

/**
 * The longest name, host and home a daemon writes to the registry (checked at its start) and any listing shows
 * (cut there on reading): the name as config.ts takes it, a host name as DNS allows (253), a home as Linux's PATH_MAX.
 */
export const DAEMON_ROW_LIMITS = { name: 200, host: 255, home: 4096 } as const;

/** The settings whose difference the listing flags. */
export const DAEMON_SETTING_KEYS = Object.keys(daemonSettingsSchema.shape) as Array<keyof DaemonSettings>;

/** The keys of `other`'s settings that differ from `mine`. */
export function settingsThatDiffer(mine: DaemonSettings, other: DaemonSettings): Array<keyof DaemonSettings> {
  return DAEMON_SETTING_KEYS.filter((k) => mine[k] !== other[k]);
}
