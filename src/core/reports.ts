/**
 * Records the store returns and the web board shows: the scheduler's
 * decisions, the metrics aggregates, and a reviewer's line comment. Here, in core, so the web
 * app can import their types without reaching into the store.
 */
import type { ScoreBreakdown } from './scoring.js';
import type { TaskStatus } from './status.js';

export interface Competitor {
  taskId: string;
  score: number;
}

export interface SchedulerDecision {
  id: number;
  projectId: string;
  taskId: string;
  owner: string;
  score: number;
  breakdown: ScoreBreakdown;
  competitors: Competitor[];
  at: number;
  /**
   * Set on the row a takeover logs (store/ops/claim.ts takeOverAtStage): nothing was ranked, the task was the lost
   * daemon's; the score and breakdown are the ones it was claimed with. Null for a claim the scheduler made.
   */
  takenOver: TakenOver | null;
}

/** A task claimed where it stood from a daemon whose lease on it ended. */
export interface TakenOver {
  /** The daemon whose lease ended. */
  from: string;
  /** The task's status when it was taken over. */
  status: TaskStatus;
}

export interface DurationStats {
  kind: string;
  count: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export interface UsageByProject {
  projectId: string;
  runs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** A reviewer's comment on one line of the diff (a rejection carries them into the next version's prompt). */
export interface LineComment {
  file: string;
  line: number;
  side: 'new' | 'old';
  text: string;
}
