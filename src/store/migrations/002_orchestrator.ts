/**
 * What the daemon needs beyond the domain tables: the scheduler's decision log,
 * idempotent ingestion (an event may carry a dedupe key; the unique index makes
 * a second ingestion of the same outbox record a no-op), where each run lives
 * and how far its outbox has been read, and the merge ledger that makes merges
 * exactly-once across crashes.
 */
import type { Migration } from './migration.js';

export const orchestrator: Migration = {
  version: 2,
  name: 'orchestrator',
  statements: [
    `CREATE TABLE scheduler_decisions (
      id {{serial}},
      project_id TEXT NOT NULL,
      task_id TEXT NOT NULL,
      owner TEXT NOT NULL,
      score DOUBLE PRECISION NOT NULL,
      breakdown TEXT NOT NULL,
      competitors TEXT NOT NULL,
      at BIGINT NOT NULL
    )`,
    `CREATE INDEX scheduler_decisions_task ON scheduler_decisions (task_id, id)`,
    `CREATE INDEX scheduler_decisions_project ON scheduler_decisions (project_id, id)`,
    `ALTER TABLE events ADD COLUMN dedupe_key TEXT`,
    `CREATE UNIQUE INDEX events_dedupe ON events (dedupe_key)`,
    `ALTER TABLE runs ADD COLUMN run_dir TEXT`,
    `ALTER TABLE runs ADD COLUMN worker_pid INTEGER`,
    `ALTER TABLE runs ADD COLUMN owner TEXT`,
    `ALTER TABLE runs ADD COLUMN outbox_offset BIGINT NOT NULL DEFAULT 0`,
    `ALTER TABLE runs ADD COLUMN outbox_seq INTEGER NOT NULL DEFAULT -1`,
    `CREATE TABLE merges (
      task_id TEXT PRIMARY KEY REFERENCES tasks(id),
      project_id TEXT NOT NULL,
      branch TEXT NOT NULL,
      commit_sha TEXT,
      merged_at BIGINT NOT NULL
    )`,
  ],
};
