/** A ready task with its score, as ReadyWork ranks it and the scheduler claims it. */
import type { ScoreBreakdown } from '../core/scoring.js';
import type { Task } from '../core/types.js';

export interface Candidate {
  task: Task;
  score: number;
  breakdown: ScoreBreakdown;
}
