/**
 * A version's feedback as data (core/feedbackSource.ts: who rejected it at which gate and why, or who ran it again
 * from main after it stopped), JSON text beside the English `feedback` the agent's prompt reads: the board says it in
 * its own language. Versions made before it have NULL, and the board shows their English text as before.
 */
import type { Migration } from './migration.js';

export const feedbackSource: Migration = {
  version: 9,
  name: 'feedback_source',
  statements: [`ALTER TABLE tasks ADD COLUMN feedback_source TEXT`],
};
