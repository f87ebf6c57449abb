/**
 * Which of the given task versions a person replaced, and why (core/supersededVersion.ts), read from the task rows:
 * the old version superseded, the next one naming it (parent_version_id) with its feedback_source. A version made
 * before migration 009 has none: the old version's last status event (to superseded, written in the same
 * transaction) says who and, for a rejection, the gate and the reason; a retry's reason is its lastRunError.
 * Every daemon on the database answers alike; no session folder is read.
 */
import { supersededVersion, type SupersededVersion } from '../../core/supersededVersion.js';
import type { Queryable, SqlValue } from '../db.js';
import { toTask, type Row } from '../rows.js';

/** Ids asked at once: the review queue asks for a project's task sessions in slices of this many. */
export const SUPERSEDED_SLICE = 500;

export async function supersededVersions(db: Queryable, ids: readonly string[], projectId?: string): Promise<Map<string, SupersededVersion>> {
  const out = new Map<string, SupersededVersion>();
  for (let i = 0; i < ids.length; i += SUPERSEDED_SLICE) {
    const slice = ids.slice(i, i + SUPERSEDED_SLICE);
    const params: SqlValue[] = [...slice];
    const list = slice.map((_, j) => `$${j + 1}`).join(', ');
    const inProject = projectId ? ` AND project_id = $${params.push(projectId)}` : '';
    const olds = await db.all<Row>(`SELECT * FROM tasks WHERE id IN (${list}) AND status = 'superseded'${inProject}`, params);
    if (!olds.length) continue;
    // One read for the whole slice, through tasks_parent_version (migration 010).
    const nexts = (await db.all<Row>(`SELECT * FROM tasks WHERE parent_version_id IN (${olds.map((_, j) => `$${j + 1}`).join(', ')}) ORDER BY version`, olds.map((o) => o.id as string))).map((r) => toTask(r));
    for (const old of olds.map((r) => toTask(r))) {
      const next = nexts.filter((n) => n.parentVersionId === old.id).at(-1);
      if (!next) continue; // a damaged chain: nothing replaced it that the store can name
      if (next.feedbackSource) {
        out.set(old.id, supersededVersion(old, next, { source: next.feedbackSource }));
        continue;
      }
      const ev = await db.one<{ payload: string }>(`SELECT payload FROM events WHERE task_id = $1 AND type = 'task.status' ORDER BY id DESC LIMIT 1`, [old.id]);
      out.set(old.id, supersededVersion(old, next, { event: ev ? (JSON.parse(ev.payload) as Record<string, unknown>) : {}, lastRunError: old.lastRunError }));
    }
  }
  return out;
}
