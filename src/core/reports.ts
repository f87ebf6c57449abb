/**
 * Records the store returns and the web board shows: the scheduler's
 * decisions, the metrics aggregates, and a reviewer's line comment. Here, in core, so the web
 * app can import their types without reaching into the store.
 */
import type { ScoreBreakdown } from './scoring.js';

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
