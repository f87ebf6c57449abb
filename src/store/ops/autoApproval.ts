/**
 * Where a project's auto-approval takes effect from (core/autoApproval.ts has the rule): projects.auto_approve_from
 * is the id of the event that switched it on or shortened it, written in that change's transaction, so every daemon
 * on the database reads the same, before and after a restart. A task at a gate is the auto-approver's when it has a
 * status event after that one: its last status change, the one into the gate, came after the setting.
 *
 * The check is one EXISTS per task at a gate over the events index (task_id, id), from that id on: the events of a
 * task waiting at a gate since before are none, whatever its history. On PostgreSQL ids are taken in order but
 * committed in any: a task's move whose transaction took its id before the setting's and committed after it counts
 * as before (it waits for a person); the other way round needs the two transactions to overlap, a few milliseconds.
 */
import { autoApproveAfterMs, widensAutoApproval, type AutoApprovalChange } from '../../core/autoApproval.js';
import { GATE_STATUSES } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { toTask, type Row } from '../rows.js';
import { inList } from './claim.js';

const AT_GATE = `t.status IN (${inList(GATE_STATUSES)})`;
/** The task changed status after the event `from` names: it reached its gate after it. */
const REACHED_AFTER = (from: string) => `EXISTS (SELECT 1 FROM events e WHERE e.task_id = t.id AND e.id > ${from} AND e.type = 'task.status')`;

/**
 * What saving `after` over `before` does to the project's auto-approval, read in the change's transaction before its
 * event is appended; null when `autoApproveAfterMs` is unchanged. `waiting`: the tasks at a gate it will not approve.
 */
export async function autoApprovalChange(q: Queryable, projectId: string, before: Record<string, unknown>, after: Record<string, unknown>): Promise<AutoApprovalChange | null> {
  const previousMs = autoApproveAfterMs(before);
  const afterMs = autoApproveAfterMs(after);
  if (previousMs === afterMs) return null;
  const from = await q.one<{ auto_approve_from: unknown }>(`SELECT auto_approve_from FROM projects WHERE id = $1`, [projectId]);
  const kept = afterMs !== null && !widensAutoApproval(previousMs, afterMs) && from?.auto_approve_from !== null && from?.auto_approve_from !== undefined;
  // Switched on, shortened or off: every task at a gate now waits for a person. Lengthened: those from before it took effect.
  const held = kept ? ` AND NOT ${REACHED_AFTER('$2')}` : '';
  const params = kept ? [projectId, Number(from!.auto_approve_from)] : [projectId];
  const row = await q.one<{ n: unknown }>(`SELECT COUNT(*) AS n FROM tasks t WHERE t.project_id = $1 AND ${AT_GATE}${held}`, params);
  return { afterMs, previousMs, waiting: Number(row?.n ?? 0) };
}

/**
 * Keeps where the auto-approval takes effect from, once the change's event (`eventId`) is appended: that event when
 * it lets more through, none when it is off; a longer wait keeps the one it had (a project without one gets this).
 */
export async function recordAutoApprovalFrom(q: Queryable, projectId: string, change: Pick<AutoApprovalChange, 'afterMs' | 'previousMs'>, eventId: number): Promise<void> {
  if (change.afterMs === null) await q.run(`UPDATE projects SET auto_approve_from = NULL WHERE id = $1`, [projectId]);
  else if (widensAutoApproval(change.previousMs, change.afterMs)) await q.run(`UPDATE projects SET auto_approve_from = $1 WHERE id = $2`, [eventId, projectId]);
  else await q.run(`UPDATE projects SET auto_approve_from = COALESCE(auto_approve_from, $1) WHERE id = $2`, [eventId, projectId]);
}

/**
 * The tasks at a gate that their project's auto-approval applies to, each with its wait (the project's setting, read
 * in the same statement as where it took effect, so the two never come from different saves). Oldest first.
 */
export async function autoApprovable(db: Queryable, limit = 10_000): Promise<{ task: Task; afterMs: number }[]> {
  const rows = await db.all<Row>(
    `SELECT t.*, p.config AS project_config FROM tasks t JOIN projects p ON p.id = t.project_id
     WHERE ${AT_GATE} AND p.auto_approve_from IS NOT NULL AND ${REACHED_AFTER('p.auto_approve_from')}
     ORDER BY t.updated_at, t.id LIMIT ${limit}`,
  );
  return rows.flatMap((r) => {
    const afterMs = autoApproveAfterMs(settingsOf(r.project_config));
    return afterMs === null ? [] : [{ task: toTask(r), afterMs }];
  });
}

/** A project's stored settings; unreadable ones approve nothing (reading the project says what is wrong with them). */
function settingsOf(text: unknown): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(String(text));
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
