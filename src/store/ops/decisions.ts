/**
 * The scheduler's decision log: every claim with its score breakdown and the competitors it beat, and every
 * takeover (marked `takenOver`). The mark is kept in the breakdown's JSON (key `takenOver`), not in a column of
 * its own: no migration, and a daemon of an earlier version on the same database reads the row as before (its
 * parser drops keys it does not know).
 */
import type { SchedulerDecision } from '../../core/reports.js';
import { TASK_STATUSES } from '../../core/status.js';
import type { Queryable, SqlValue } from '../db.js';
import { parseJsonColumn, type Row } from '../rows.js';
import { z } from 'zod';

export type { Competitor, SchedulerDecision, TakenOver } from '../../core/reports.js';

const takenOverSchema = z.object({ from: z.string(), status: z.enum(TASK_STATUSES) });
const breakdownSchema = z.object({ rankU: z.number(), chainInertia: z.number(), agingBonus: z.number(), couplingPenalty: z.number(), takenOver: takenOverSchema.optional() });
const competitorsSchema = z.array(z.object({ taskId: z.string(), score: z.number() }));

function toDecision(r: Row): SchedulerDecision {
  const id = Number(r.id);
  const { takenOver, ...breakdown } = parseJsonColumn('scheduler_decisions', 'breakdown', id, r.breakdown, breakdownSchema);
  return {
    id,
    projectId: String(r.project_id),
    taskId: String(r.task_id),
    owner: String(r.owner),
    score: Number(r.score),
    breakdown,
    competitors: parseJsonColumn('scheduler_decisions', 'competitors', id, r.competitors, competitorsSchema),
    at: Number(r.at),
    takenOver: takenOver ?? null,
  };
}

export async function recordDecision(db: Queryable, d: Omit<SchedulerDecision, 'id' | 'takenOver'> & Partial<Pick<SchedulerDecision, 'takenOver'>>): Promise<void> {
  const breakdown = d.takenOver ? { ...d.breakdown, takenOver: d.takenOver } : d.breakdown;
  await db.run(`INSERT INTO scheduler_decisions (project_id, task_id, owner, score, breakdown, competitors, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    d.projectId, d.taskId, d.owner, d.score, JSON.stringify(breakdown), JSON.stringify(d.competitors), d.at,
  ]);
}

export async function listDecisions(db: Queryable, filter: { taskId?: string; projectId?: string; limit?: number } = {}): Promise<SchedulerDecision[]> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (filter.taskId) where.push(`task_id = $${params.push(filter.taskId)}`);
  if (filter.projectId) where.push(`project_id = $${params.push(filter.projectId)}`);
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 1000);
  const rows = await db.all<Row>(`SELECT * FROM scheduler_decisions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit}`, params);
  return rows.map(toDecision);
}
