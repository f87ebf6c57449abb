/** Reading tasks: one by id (with its approvals, or its row alone), or a filtered page. */
import { MaestroError } from '../../core/errors.js';
import type { TaskStatus } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable, SqlValue } from '../db.js';
import { APPROVAL_COLUMNS, toApproval, toTask, type Row } from '../rows.js';

const rowOf = (db: Queryable, id: string) => db.one<Row>(`SELECT * FROM tasks WHERE id = $1`, [id]);

export async function findTask(db: Queryable, id: string): Promise<Task | undefined> {
  const row = await rowOf(db, id);
  if (!row) return undefined;
  const approvals = (await db.all<Row>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE task_id = $1 ORDER BY at, id`, [id])).map(toApproval);
  return toTask(row, approvals);
}

export async function getTask(db: Queryable, id: string): Promise<Task> {
  const task = await findTask(db, id);
  if (!task) throw unknownTask(id);
  return task;
}

/**
 * The task's row without its approvals (`approvals` is empty, as in listTasks): what the daemon reads to
 * decide (status, claim, branch), half the queries of getTask. A person sees a task through getTask.
 */
export async function taskRow(db: Queryable, id: string): Promise<Task> {
  const row = await rowOf(db, id);
  if (!row) throw unknownTask(id);
  return toTask(row);
}

function unknownTask(id: string): MaestroError {
  return new MaestroError('UNKNOWN_TASK', `No task "${id}".`, { details: { taskId: id } });
}

export interface TaskFilter {
  /** Only these tasks (at most 1,000 ids). */
  ids?: readonly string[];
  projectId?: string;
  status?: TaskStatus | readonly TaskStatus[];
  parentId?: string | null;
  limit?: number;
  offset?: number;
}

/** The WHERE clause and its parameters for a filter; null when it matches nothing (an empty ids or status list). */
function whereOf(filter: TaskFilter): { sql: string; params: SqlValue[] } | null {
  const where: string[] = [];
  const params: SqlValue[] = [];
  const p = (v: SqlValue) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (filter.ids) {
    if (!filter.ids.length) return null;
    where.push(`id IN (${filter.ids.slice(0, 1000).map((id) => p(id)).join(', ')})`);
  }
  if (filter.projectId) where.push(`project_id = ${p(filter.projectId)}`);
  if (filter.status !== undefined) {
    const list = Array.isArray(filter.status) ? filter.status : [filter.status];
    if (!list.length) return null;
    where.push(`status IN (${list.map((s) => p(s)).join(', ')})`);
  }
  if (filter.parentId === null) where.push('parent_id IS NULL');
  else if (filter.parentId) where.push(`parent_id = ${p(filter.parentId)}`);
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}

/** Tasks in creation order. Approvals are not loaded here (use getTask). */
export async function listTasks(db: Queryable, filter: TaskFilter = {}): Promise<Task[]> {
  const where = whereOf(filter);
  if (!where) return [];
  const limit = Math.min(Math.max(filter.limit ?? 1000, 1), 100_000);
  const offset = Math.max(filter.offset ?? 0, 0);
  const sql = `SELECT * FROM tasks ${where.sql} ORDER BY created_at, id LIMIT ${limit} OFFSET ${offset}`;
  return (await db.all<Row>(sql, where.params)).map((r) => toTask(r));
}

/** How many tasks the filter matches, all pages together (limit and offset are not read). */
export async function countTasks(db: Queryable, filter: TaskFilter = {}): Promise<number> {
  const where = whereOf(filter);
  if (!where) return 0;
  const row = await db.one<{ n: number | string }>(`SELECT COUNT(*) AS n FROM tasks ${where.sql}`, where.params);
  return Number(row?.n ?? 0);
}

/** How many ids one read of tasksByIds names (listTasks takes at most 1,000). */
const IDS_PER_READ = 500;

/** Every task among `ids`, however many, read a chunk of ids at a time; unknown ids are left out, order is not kept. */
export async function tasksByIds(db: Queryable, ids: Iterable<string>): Promise<Task[]> {
  const all = [...new Set(ids)];
  const out: Task[] = [];
  for (let i = 0; i < all.length; i += IDS_PER_READ) out.push(...(await listTasks(db, { ids: all.slice(i, i + IDS_PER_READ), limit: IDS_PER_READ })));
  return out;
}
