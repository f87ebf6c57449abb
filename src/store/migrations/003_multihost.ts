/**
 * Several daemons on one database: who is alive (a name each, with a heartbeat),
 * and which daemon may merge into a project's main right now (a lease).
 */
import type { Migration } from './migration.js';

export const multihost: Migration = {
  version: 3,
  name: 'multihost',
  statements: [
    `CREATE TABLE daemons (
      name TEXT PRIMARY KEY,
      host TEXT NOT NULL,
      pid INTEGER NOT NULL,
      home TEXT NOT NULL,
      started_at BIGINT NOT NULL,
      heartbeat_at BIGINT NOT NULL
    )`,
    `CREATE TABLE merge_locks (
      project_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      expires_at BIGINT NOT NULL
    )`,
  ],
};
