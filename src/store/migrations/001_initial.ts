/**
 * The orchestrator schema of seed 002 §9 with every task / run / approval /
 * event field of ARCHITECTURE §3. Timestamps are epoch milliseconds (BIGINT);
 * JSON columns are TEXT, parsed and validated on read.
 */
import type { Migration } from './migration.js';

export const initial: Migration = {
  version: 1,
  name: 'initial',
  statements: [
    `CREATE TABLE projects (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      repo_path TEXT NOT NULL,
      config TEXT NOT NULL DEFAULT '{}',
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL
    )`,
    `CREATE TABLE tasks (
      id TEXT PRIMARY KEY,
      project_id TEXT NOT NULL REFERENCES projects(id),
      parent_id TEXT REFERENCES tasks(id),
      depth INTEGER NOT NULL DEFAULT 0,
      title TEXT NOT NULL,
      complexity TEXT NOT NULL,
      status TEXT NOT NULL,
      priority INTEGER NOT NULL,
      deps TEXT NOT NULL DEFAULT '[]',
      plan TEXT,
      spec TEXT,
      result TEXT,
      retry_baseline INTEGER NOT NULL DEFAULT 0,
      next_eligible_at BIGINT,
      last_run_error TEXT,
      task_type TEXT,
      scope TEXT,
      owned_files TEXT NOT NULL DEFAULT '[]',
      expected_output TEXT,
      feedback TEXT,
      parent_version_id TEXT REFERENCES tasks(id),
      version INTEGER NOT NULL DEFAULT 1,
      claimed_at BIGINT,
      claimed_by TEXT,
      attempt INTEGER NOT NULL DEFAULT 0,
      lease_expires_at BIGINT,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL
    )`,
    `CREATE INDEX tasks_project_status ON tasks (project_id, status)`,
    `CREATE INDEX tasks_claimable ON tasks (status, claimed_at, next_eligible_at)`,
    `CREATE INDEX tasks_parent ON tasks (parent_id)`,
    `CREATE TABLE runs (
      id TEXT PRIMARY KEY,
      task_id TEXT NOT NULL REFERENCES tasks(id),
      kind TEXT NOT NULL,
      status TEXT NOT NULL,
      model TEXT,
      trace_id TEXT NOT NULL,
      attempt INTEGER NOT NULL DEFAULT 0,
      started_at BIGINT NOT NULL,
      ended_at BIGINT,
      input_tokens BIGINT NOT NULL DEFAULT 0,
      output_tokens BIGINT NOT NULL DEFAULT 0,
      cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
      error TEXT
    )`,
    `CREATE INDEX runs_task ON runs (task_id, started_at)`,
    `CREATE INDEX runs_trace ON runs (trace_id)`,
    `CREATE TABLE approvals (
      id TEXT PRIMARY KEY,
      task_id TEXT NOT NULL REFERENCES tasks(id),
      gate TEXT NOT NULL,
      decision TEXT NOT NULL,
      reason TEXT,
      who TEXT NOT NULL,
      at BIGINT NOT NULL
    )`,
    `CREATE INDEX approvals_task ON approvals (task_id, at)`,
    `CREATE TABLE events (
      id {{serial}},
      project_id TEXT,
      task_id TEXT,
      run_id TEXT,
      trace_id TEXT,
      type TEXT NOT NULL,
      payload TEXT NOT NULL DEFAULT '{}',
      at BIGINT NOT NULL
    )`,
    `CREATE INDEX events_task ON events (task_id, id)`,
    `CREATE INDEX events_project ON events (project_id, id)`,
    `CREATE INDEX events_trace ON events (trace_id, id)`,
  ],
  // Events are append-only: the database itself refuses an update or delete.
  sqlite: [
    `CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END`,
    `CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END`,
  ],
  postgres: [
    `CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN RAISE EXCEPTION 'events are append-only'; END $fn$`,
    `CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only()`,
  ],
};
