/**
 * A project can be archived: kept with all its history, shown apart, and given no new work
 * (ops/projects.ts archiveProject). NULL: active.
 */
import type { Migration } from './migration.js';

export const projectArchive: Migration = {
  version: 7,
  name: 'project_archive',
  statements: [`ALTER TABLE projects ADD COLUMN archived_at BIGINT`],
};
