/** The event log: append-only (the schema's triggers refuse updates and deletes), paged by id. */
import type { MaestroEvent } from '../../core/types.js';
import type { Queryable, SqlValue } from '../db.js';
import { toEvent, type Row } from '../rows.js';

export type NewEvent = Omit<MaestroEvent, 'id' | 'at' | 'projectId' | 'taskId' | 'runId' | 'traceId'> &
  Partial<Pick<MaestroEvent, 'projectId' | 'taskId' | 'runId' | 'traceId'>>;

export async function appendEvent(db: Queryable, e: NewEvent, now: number): Promise<MaestroEvent> {
  const rows = await db.all<Row>(
    `INSERT INTO events (project_id, task_id, run_id, trace_id, type, payload, at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [e.projectId ?? null, e.taskId ?? null, e.runId ?? null, e.traceId ?? null, e.type, JSON.stringify(e.payload), now],
  );
  const event = toEvent(rows[0]!);
  db.onEvent?.(event);
  return event;
}

export interface EventPage {
  events: MaestroEvent[];
  /** Oldest first: pass as `after` for the next page; null when this page is the last (and newest first). */
  nextAfter: number | null;
  /** Newest first: pass as `before` for the next page; null when this page is the last (and oldest first). */
  nextBefore: number | null;
}

export interface EventFilter {
  projectId?: string;
  taskId?: string;
  runId?: string;
  traceId?: string;
  type?: string;
  /** Only events with a greater id. */
  after?: number;
  /** Only events with a smaller id. */
  before?: number;
  /** `oldest` (the default) pages forward with `after`; `newest` starts at the newest and pages back with `before`. */
  order?: 'oldest' | 'newest';
  limit?: number;
}

/** A page of the event log, oldest first (to follow it) or newest first (what happened last, as a screen shows it). */
export async function listEvents(db: Queryable, filter: EventFilter = {}): Promise<EventPage> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (filter.projectId) where.push(`project_id = $${params.push(filter.projectId)}`);
  if (filter.taskId) where.push(`task_id = $${params.push(filter.taskId)}`);
  if (filter.runId) where.push(`run_id = $${params.push(filter.runId)}`);
  if (filter.traceId) where.push(`trace_id = $${params.push(filter.traceId)}`);
  if (filter.type) where.push(`type = $${params.push(filter.type)}`);
  if (filter.after !== undefined) where.push(`id > $${params.push(filter.after)}`);
  if (filter.before !== undefined) where.push(`id < $${params.push(filter.before)}`);
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
  const newest = filter.order === 'newest';
  const rows = await db.all<Row>(`SELECT * FROM events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id${newest ? ' DESC' : ''} LIMIT ${limit + 1}`, params);
  const events = rows.slice(0, limit).map(toEvent);
  const next = rows.length > limit ? events[events.length - 1]!.id : null;
  return { events, nextAfter: newest ? null : next, nextBefore: newest ? next : null };
}

/**
 * Appends an event unless one with the same dedupe key exists (e.g.
 * `<runId>:<seq>` for an outbox record): ingesting a record twice never
 * duplicates its event. Returns null for the duplicate.
 */
export async function appendEventOnce(db: Queryable, e: NewEvent, dedupeKey: string, now: number): Promise<MaestroEvent | null> {
  const rows = await db.all<Row>(
    `INSERT INTO events (project_id, task_id, run_id, trace_id, type, payload, at, dedupe_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (dedupe_key) DO NOTHING RETURNING *`,
    [e.projectId ?? null, e.taskId ?? null, e.runId ?? null, e.traceId ?? null, e.type, JSON.stringify(e.payload), now, dedupeKey],
  );
  const event = rows[0] ? toEvent(rows[0]) : null;
  if (event) db.onEvent?.(event);
  return event;
}

/** The events with these ids that exist (by id); for the feed's re-check of ids it skipped. */
export async function eventsByIds(db: Queryable, ids: readonly number[]): Promise<MaestroEvent[]> {
  if (!ids.length) return [];
  const rows = await db.all<Row>(`SELECT * FROM events WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')}) ORDER BY id`, [...ids]);
  return rows.map(toEvent);
}

/** The status-shaping events (creations, edits, status changes): what the scheduler's ranking follows, and what ticks the orchestrator. */
export const TASK_CHANGE_TYPES = ['task.created', 'task.edited', 'task.status'] as const;

/** The status-shaping events after `after`. */
export async function taskChangesAfter(db: Queryable, after: number, limit = 1000): Promise<{ id: number; taskId: string | null; type: string; payload: Record<string, unknown> }[]> {
  const rows = await db.all<Row>(
    `SELECT * FROM events WHERE id > $1 AND type IN (${TASK_CHANGE_TYPES.map((t) => `'${t}'`).join(', ')}) ORDER BY id LIMIT ${Math.min(Math.max(limit, 1), 10_000)}`,
    [after],
  );
  return rows.map(toEvent).map((e) => ({ id: e.id, taskId: e.taskId, type: e.type, payload: e.payload }));
}

/** The highest event id so far (0 for none). */
export async function lastEventId(db: Queryable): Promise<number> {
  const row = await db.one<{ id: number | null }>(`SELECT MAX(id) AS id FROM events`);
  return Number(row?.id ?? 0);
}
