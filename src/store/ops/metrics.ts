/** Aggregates for the board's metrics: tasks by status, run durations, tokens and cost. */
import type { DurationStats, UsageByProject } from '../../core/reports.js';
import type { Queryable, SqlValue } from '../db.js';

export async function tasksByStatus(db: Queryable, projectId?: string): Promise<Record<string, number>> {
  const params: SqlValue[] = projectId ? [projectId] : [];
  const rows = await db.all<{ status: string; n: number }>(
    `SELECT status, COUNT(*) AS n FROM tasks ${projectId ? 'WHERE project_id = $1' : ''} GROUP BY status ORDER BY status`,
    params,
  );
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

export type { DurationStats, UsageByProject } from '../../core/reports.js';

/** Durations of finished runs per kind. Percentiles are computed here, the same on both engines. */
export async function runDurations(db: Queryable, projectId?: string): Promise<DurationStats[]> {
  const params: SqlValue[] = projectId ? [projectId] : [];
  const rows = await db.all<{ kind: string; d: number }>(
    `SELECT r.kind AS kind, r.ended_at - r.started_at AS d FROM runs r JOIN tasks t ON t.id = r.task_id
     WHERE r.ended_at IS NOT NULL ${projectId ? 'AND t.project_id = $1' : ''} ORDER BY r.kind, d`,
    params,
  );
  const byKind = new Map<string, number[]>();
  for (const r of rows) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), Number(r.d)]);
  const pick = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return [...byKind].map(([kind, ds]) => ({
    kind,
    count: ds.length,
    meanMs: ds.reduce((a, b) => a + b, 0) / ds.length,
    p50Ms: pick(ds, 0.5),
    p95Ms: pick(ds, 0.95),
    maxMs: ds[ds.length - 1]!,
  }));
}

export async function usageByProject(db: Queryable): Promise<UsageByProject[]> {
  const rows = await db.all<{ project_id: string; runs: number; i: number; o: number; c: number }>(
    `SELECT t.project_id AS project_id, COUNT(r.id) AS runs, COALESCE(SUM(r.input_tokens), 0) AS i, COALESCE(SUM(r.output_tokens), 0) AS o, COALESCE(SUM(r.cost_usd), 0) AS c
     FROM runs r JOIN tasks t ON t.id = r.task_id GROUP BY t.project_id ORDER BY t.project_id`,
  );
  return rows.map((r) => ({ projectId: r.project_id, runs: Number(r.runs), inputTokens: Number(r.i), outputTokens: Number(r.o), costUsd: Number(r.c) }));
}
