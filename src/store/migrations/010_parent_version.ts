/**
 * A task's next version through an index. Rejecting or retrying a task makes a new row naming the old one
 * (parent_version_id); the review queue's superseded sessions (ops/supersededVersions.ts), a dependency's newest
 * version (ops/createTask.ts) and the version chain look rows up by it, and each lookup scanned every task, so its
 * cost grew with the project's history. Only replaced versions have a parent: the partial index holds those rows.
 */
import type { Migration } from './migration.js';

export const parentVersion: Migration = {
  version: 10,
  name: 'parent_version',
  statements: [`CREATE INDEX tasks_parent_version ON tasks (parent_version_id) WHERE parent_version_id IS NOT NULL`],
};
