/** Runs: one agent run of a task (plan, execute, review or conflict). */
import { MaestroError } from '../../core/errors.js';
import type { Run, RunKind, RunStatus } from '../../core/types.js';
import type { Queryable, SqlValue } from '../db.js';
import { newId, toRun, type Row } from '../rows.js';
import { appendEvent } from './events.js';
import { taskRow } from './getTask.js';
import { assertActive } from './projects.js';

export async function createRun(
  db: Queryable,
  opts: { taskId: string; kind: RunKind; model: string | null; traceId: string; attempt: number; now: number; id?: string; runDir?: string | null; owner?: string | null },
): Promise<Run> {
  await taskRow(db, opts.taskId);
  const run: Run = {
    id: opts.id ?? newId('r'),
    taskId: opts.taskId,
    kind: opts.kind,
    status: 'running',
    model: opts.model,
    traceId: opts.traceId,
    attempt: opts.attempt,
    startedAt: opts.now,
    endedAt: null,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    error: null,
    runDir: opts.runDir ?? null,
    owner: opts.owner ?? null,
    workerPid: null,
    outboxOffset: 0,
    outboxSeq: -1,
  };
  await db.run(`INSERT INTO runs (id, task_id, kind, status, model, trace_id, attempt, started_at, run_dir, owner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
    run.id, run.taskId, run.kind, run.status, run.model, run.traceId, run.attempt, run.startedAt, run.runDir, run.owner,
  ]);
  return run;
}

export async function getRun(db: Queryable, id: string): Promise<Run> {
  const row = await db.one<Row>(`SELECT * FROM runs WHERE id = $1`, [id]);
  if (!row) throw new MaestroError('UNKNOWN_RUN', `No run "${id}".`, { details: { runId: id } });
  return toRun(row);
}

/** Creates a running run with its `run.started` event. Run it inside one transaction. */
export async function startRun(db: Queryable, opts: Parameters<typeof createRun>[1]): Promise<Run> {
  const task = await taskRow(db, opts.taskId);
  // The project's row is held to the commit: an archive either waits for this start or is seen by it.
  await assertActive(db, task.projectId, 'no run starts in it', true);
  const run = await createRun(db, opts);
  await appendEvent(db, { projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'run.started', payload: { kind: run.kind } }, opts.now);
  return run;
}

/**
 * Ends a running run once; a second finish is refused (the first one stands).
 * `model`: the model(s) the run's agent calls used (the worker reports them at
 * the end; a run is created before its first call picks one), kept when absent.
 */
export async function finishRun(
  db: Queryable,
  opts: { id: string; status: Exclude<RunStatus, 'running'>; now: number; inputTokens?: number; outputTokens?: number; costUsd?: number; error?: string | null; model?: string | null },
): Promise<Run> {
  const changed = await db.run(
    `UPDATE runs SET status = $1, ended_at = $2, input_tokens = input_tokens + $3, output_tokens = output_tokens + $4, cost_usd = cost_usd + $5, error = $6, model = COALESCE($8, model)
     WHERE id = $7 AND status = 'running'`,
    [opts.status, opts.now, opts.inputTokens ?? 0, opts.outputTokens ?? 0, opts.costUsd ?? 0, opts.error ?? null, opts.id, opts.model ?? null],
  );
  const run = await getRun(db, opts.id);
  if (changed !== 1) throw new MaestroError('ILLEGAL_TRANSITION', `Run ${opts.id} already ended as ${run.status}.`, { details: { runId: opts.id, status: run.status } });
  return run;
}

export async function listRuns(db: Queryable, filter: { taskId?: string; traceId?: string; status?: RunStatus; owner?: string; limit?: number } = {}): Promise<Run[]> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (filter.taskId) where.push(`task_id = $${params.push(filter.taskId)}`);
  if (filter.traceId) where.push(`trace_id = $${params.push(filter.traceId)}`);
  if (filter.status) where.push(`status = $${params.push(filter.status)}`);
  if (filter.owner) where.push(`owner = $${params.push(filter.owner)}`);
  const limit = Math.min(Math.max(filter.limit ?? 1000, 1), 100_000);
  return (await db.all<Row>(`SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at, id LIMIT ${limit}`, params)).map(toRun);
}

/** Records the worker process of a run. */
export async function setRunWorker(db: Queryable, id: string, pid: number | null): Promise<void> {
  await db.run(`UPDATE runs SET worker_pid = $1 WHERE id = $2`, [pid, id]);
}

/** Persists how far the outbox was ingested; never moves backwards. */
export async function setOutboxProgress(db: Queryable, id: string, offset: number, seq: number): Promise<void> {
  await db.run(`UPDATE runs SET outbox_offset = $1, outbox_seq = $2 WHERE id = $3 AND outbox_offset <= $1`, [offset, seq, id]);
}
