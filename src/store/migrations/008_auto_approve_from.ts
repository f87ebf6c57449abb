/**
 * Where a project's auto-approval took effect (core/autoApproval.ts): the id of the event from which a task that
 * reaches a gate is approved by itself; one waiting there since before waits for a person. NULL: the project has
 * no auto-approval. A project that had one before this column did had it for every task: 0, as it was.
 */
import type { Migration } from './migration.js';

export const autoApproveFrom: Migration = {
  version: 8,
  name: 'auto_approve_from',
  statements: [
    `ALTER TABLE projects ADD COLUMN auto_approve_from BIGINT`,
    // config is JSON text: JSON.stringify writes the key so (a text value holding it too only sets a column its rule ignores).
    `UPDATE projects SET auto_approve_from = 0 WHERE config LIKE '%"autoApproveAfterMs":%'`,
  ],
};
