/**
 * What a daemon stopped on purpose (Ctrl-C, SIGTERM) hands over once its workers have stopped. A worker that finished
 * its run during the grace period wrote its result: that is applied (the branch pushed first), so that the task stands
 * at its next stage. Then the tasks it holds with no run in flight are released (store/ops/claim.ts
 * releaseIdleClaims): another daemon takes them over at once (at review, from the pushed commit), not a lease later.
 * Before, the result could be left unread and the claim kept: a lease later another daemon sent the task to ready
 * and its execute ran again from scratch (a team trial). A task whose run was cut off mid-stage keeps its claim,
 * so that this daemon's next start resumes the run.
 */
import { coerceError } from '../core/errors.js';
import type { Store } from '../store/store.js';
import type { Ingestor } from './ingestor.js';

interface HandOverParts {
  store: Store;
  owner: string;
  onError: (err: Error) => void;
  log?: { info(obj: Record<string, unknown>, msg: string): void };
}

/** Reads what this daemon's running runs left in their outboxes (their workers have stopped): a final record settles its run. */
export async function applyLeftovers(parts: HandOverParts, ingestor: Ingestor): Promise<void> {
  try {
    for (const run of await parts.store.runs.list({ status: 'running', owner: parts.owner, limit: 100_000 })) await ingestor.ingest(run);
  } catch (err) {
    parts.onError(coerceError(err));
  }
}

/** Releases the tasks this daemon holds between stages, saying which in the log. */
export async function releaseBetweenStages(parts: HandOverParts): Promise<void> {
  try {
    const released = await parts.store.tasks.releaseIdleClaims(parts.owner);
    if (released.length) parts.log?.info({ tasks: released }, 'released the tasks held between stages: another daemon goes on with them now');
  } catch (err) {
    parts.onError(coerceError(err));
  }
}
