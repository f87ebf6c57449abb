/**
 * NOTIFY maestro_events leaves the writing transactions. Migration 004's
 * trigger queued a notification in every transaction that inserted events, and
 * PostgreSQL takes one database-wide lock to move queued notifications into
 * its queue at commit, held (with synchronous_commit on) across the WAL flush:
 * every claim transaction waited for every other one there. Four claimers ran
 * at 0.61× one (bench:core, 10,991 vs 17,993 claims/s); dropping the trigger
 * took four to 12,529 in a scratch run. The store now sends the notification
 * itself after a transaction that appended events has committed, coalesced
 * per process (store/pgNotifier.ts). SQLite never had the trigger.
 */
import type { Migration } from './migration.js';

export const notifyAfterCommit: Migration = {
  version: 6,
  name: 'notify_after_commit',
  statements: [],
  postgres: [`DROP TRIGGER IF EXISTS events_notify ON events`, `DROP FUNCTION IF EXISTS events_notify()`],
};
