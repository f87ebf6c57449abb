/**
 * Claimable work in creation order through an index. The scheduler's reads of
 * claimable tasks (`ORDER BY created_at, id LIMIT n`, ops/claim.ts) found every
 * ready row through tasks_claimable and sorted them all for the first n: 2.4 ms
 * per read with 10,000 ready tasks on PostgreSQL, and every claimer pays it
 * again for each slice. The partial index holds only unclaimed ready rows, in
 * that order, so a read stops after n; a claim takes its row out of it.
 */
import type { Migration } from './migration.js';

export const readyOrder: Migration = {
  version: 5,
  name: 'ready_order',
  statements: [`CREATE INDEX tasks_ready_order ON tasks (created_at, id) WHERE status = 'ready' AND claimed_at IS NULL`],
};
