/**
 * Human gates. Approval records the decision and moves the task on. Rejection
 * records the decision with its reason, supersedes this version, and creates
 * the next one (version + 1, parentVersionId) back in ready, carrying the
 * reason as feedback; tasks that depended on the old version now depend on
 * the new one. Run these inside one transaction (the Store does).
 */
import { MaestroError } from '../../core/errors.js';
import { reviewedHead, staleReview } from '../../core/reviewed.js';
import { statusAfterApproval, type TaskStatus } from '../../core/status.js';
import type { LineComment } from '../../core/reports.js';
import type { Approval, Gate, Task } from '../../core/types.js';
import type { Queryable } from '../db.js';
import { APPROVAL_COLUMNS, newId, toApproval } from '../rows.js';
import { getTask } from './getTask.js';
import { insertNextVersion } from './nextVersion.js';
import { transitionTask } from './transitionTask.js';

async function recordApproval(db: Queryable, a: Omit<Approval, 'id' | 'conflictResolution'>): Promise<Approval> {
  const id = newId('a');
  await db.run(`INSERT INTO approvals (id, task_id, gate, decision, reason, who, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [id, a.taskId, a.gate, a.decision, a.reason, a.who, a.at]);
  // Read back as every approval is: what it approved comes from the task's runs.
  return toApproval((await db.one<Record<string, unknown>>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`, [id]))!);
}

function assertAtGate(task: Task, gate: Gate): void {
  if (task.status !== gate) {
    throw new MaestroError('WRONG_GATE', `Task ${task.id} is ${task.status}, not waiting at ${gate}.`, { details: { taskId: task.id, status: task.status, gate } });
  }
}

/**
 * `commit`: the commit of the change the person looked at (exec_review). Checked here, in the approval's
 * transaction, against the commit the reviewers approved (reviewedHead: the one the diff shows), so that no new
 * review lands between the check and the approval. A result that names none is checked by the caller
 * (api/routes/review.ts checkApprovedCommit).
 */
export async function approveGate(db: Queryable, opts: { id: string; gate: Gate; who: string; reason: string | null; now: number; to?: TaskStatus; commit?: string }): Promise<{ task: Task; approval: Approval }> {
  const task = await getTask(db, opts.id);
  assertAtGate(task, opts.gate);
  const reviewed = reviewedHead(task);
  if (opts.commit !== undefined && reviewed !== null && reviewed !== opts.commit) throw staleReview(task, opts.commit, reviewed);
  const children = await db.one<{ n: number }>(`SELECT COUNT(*) AS n FROM tasks WHERE parent_id = $1`, [task.id]);
  const to = opts.to ?? statusAfterApproval(opts.gate, Number(children?.n ?? 0) > 0);
  const approval = await recordApproval(db, { taskId: task.id, gate: opts.gate, decision: 'approve', reason: opts.reason, who: opts.who, at: opts.now });
  const { after } = await transitionTask(db, { id: task.id, from: opts.gate, to, now: opts.now });
  return { task: after, approval };
}

/** A reviewer's remark on one line of the change (validated against the diff by the API). */
export type { LineComment } from '../../core/reports.js';

/** The feedback the next version's prompts carry: the reason, then each line comment as `file:line — text`. */
export function rejectionFeedback(gate: Gate, who: string, reason: string, comments: LineComment[] = []): string {
  const head = `${gate} rejected by ${who}: ${reason}`;
  if (!comments.length) return head;
  const lines = comments.map((c) => `- ${c.file}:${c.line}${c.side === 'old' ? ' (old side, a removed line)' : ''} — ${c.text}`);
  return `${head}\n\nLine comments from the reviewer (file:line — what to change):\n${lines.join('\n')}`;
}

export async function rejectGate(db: Queryable, opts: { id: string; gate: Gate; who: string; reason: string; now: number; comments?: LineComment[] }): Promise<{ old: Task; next: Task; approval: Approval }> {
  if (!opts.reason.trim()) throw new MaestroError('BAD_INPUT', 'A rejection needs a reason: say what the next version must change.');
  const task = await getTask(db, opts.id);
  assertAtGate(task, opts.gate);
  const approval = await recordApproval(db, { taskId: task.id, gate: opts.gate, decision: 'reject', reason: opts.reason, who: opts.who, at: opts.now });
  const { after: old } = await transitionTask(db, { id: task.id, from: opts.gate, to: 'superseded', now: opts.now });
  // A rejected plan is planned again; a rejected execution keeps its approved plan.
  const next = await insertNextVersion(db, task, {
    plan: opts.gate === 'exec_review' ? task.plan : null,
    feedback: rejectionFeedback(opts.gate, opts.who, opts.reason, opts.comments),
    feedbackSource: { kind: 'rejection', gate: opts.gate, who: opts.who, reason: opts.reason, comments: opts.comments ?? [] },
    now: opts.now,
  });
  return { old, next, approval };
}

export async function listApprovals(db: Queryable, filter: { taskId?: string; limit?: number } = {}): Promise<Approval[]> {
  const limit = Math.min(Math.max(filter.limit ?? 200, 1), 1000);
  const rows = filter.taskId
    ? await db.all<Record<string, unknown>>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE task_id = $1 ORDER BY at, id LIMIT ${limit}`, [filter.taskId])
    : await db.all<Record<string, unknown>>(`SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY at DESC, id LIMIT ${limit}`);
  return rows.map(toApproval);
}
