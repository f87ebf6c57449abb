/**
 * What a finished plan, execute or conflict run proposed for the knowledge review, kept beside the run in the
 * database: its run ledger (`knowledge-delta.json`) as the daemon that ran it sealed it. The ledger itself is staged
 * in that daemon's clone (never pushed: a host's own record), so a daemon that took the task over could not review
 * it; with this row it imports the ledger into its own session folder (daemon/knowledgeImport.ts). A table of its
 * own, not a column of `runs`: every listing of runs would read the ledgers (up to 4 MB each) along.
 * `ledger` NULL: the run staged nothing. A run with no row finished before this table (or its daemon could not read
 * its ledger): its candidates are only where it ran.
 */
import type { Migration } from './migration.js';

export const runKnowledge: Migration = {
  version: 12,
  name: 'run_knowledge',
  statements: [
    `CREATE TABLE run_knowledge (
      run_id TEXT PRIMARY KEY REFERENCES runs(id),
      ledger TEXT,
      stored_at BIGINT NOT NULL
    )`,
  ],
};
