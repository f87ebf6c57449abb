/** The scheduler's decision log: every claim with its score breakdown and the competitors it beat. */
import type { SchedulerDecision } from '../../core/reports.js';
import type { Queryable, SqlValue } from '../db.js';
import { parseJsonColumn, type Row } from '../rows.js';
import { z } from 'zod';

export type { Competitor, SchedulerDecision } from '../../core/reports.js';

const breakdownSchema = z.object({ rankU: z.number(), chainInertia: z.number(), agingBonus: z.number(), couplingPenalty: z.number() });
const competitorsSchema = z.array(z.object({ taskId: z.string(), score: z.number() }));

function toDecision(r: Row): SchedulerDecision {
  const id = Number(r.id);
  return {
    id,
    projectId: String(r.project_id),
    taskId: String(r.task_id),
    owner: String(r.owner),
    score: Number(r.score),
    breakdown: parseJsonColumn('scheduler_decisions', 'breakdown', id, r.breakdown, breakdownSchema),
    competitors: parseJsonColumn('scheduler_decisions', 'competitors', id, r.competitors, competitorsSchema),
    at: Number(r.at),
  };
}

export async function recordDecision(db: Queryable, d: Omit<SchedulerDecision, 'id'>): Promise<void> {
  await db.run(`INSERT INTO scheduler_decisions (project_id, task_id, owner, score, breakdown, competitors, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    d.projectId, d.taskId, d.owner, d.score, JSON.stringify(d.breakdown), JSON.stringify(d.competitors), d.at,
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
