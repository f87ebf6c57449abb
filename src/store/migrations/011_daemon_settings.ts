/**
 * What each daemon runs with, beside its name in the registry: one JSON column (core/daemonSettings.ts: version,
 * lease, worker counts, agent sandbox) that `maestro daemons` compares across the daemons of one database. Rows of
 * daemons from before it have NULL, shown as settings not known.
 */
import type { Migration } from './migration.js';

export const daemonSettings: Migration = {
  version: 11,
  name: 'daemon_settings',
  statements: [`ALTER TABLE daemons ADD COLUMN settings TEXT`],
};
