/**
 * A guarded status change: the status machine's guard, then a compare-and-set
 * on the status read, so two writers racing on one task cannot both win.
 * Moving to ready clears the claim (core/status `transitionPatch`).
 */
import { MaestroError } from '../../core/errors.js';
import { transitionPatch, type TaskStatus } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { Queryable, SqlValue } from '../db.js';
import { getTask, taskRow } from './getTask.js';

/** Fields a transition may set along with the status. */
export interface TransitionFields {
  plan?: string | null;
  spec?: string | null;
  result?: Record<string, unknown> | null;
  lastRunError?: string | null;
  feedback?: string | null;
  nextEligibleAt?: number | null;
}

const FIELD_COLUMNS: Record<keyof TransitionFields, string> = {
  plan: 'plan',
  spec: 'spec',
  result: 'result',
  lastRunError: 'last_run_error',
  feedback: 'feedback',
  nextEligibleAt: 'next_eligible_at',
};

export function fieldSets(fields: TransitionFields, params: SqlValue[]): string[] {
  const sets: string[] = [];
  for (const [key, value] of Object.entries(fields) as [keyof TransitionFields, unknown][]) {
    if (value === undefined) continue;
    params.push(key === 'result' && value !== null ? JSON.stringify(value) : (value as SqlValue));
    sets.push(`${FIELD_COLUMNS[key]} = $${params.length}`);
  }
  return sets;
}

export function claimSets(to: TaskStatus, from: TaskStatus, taskId: string): string[] {
  const patch = transitionPatch(from, to, taskId);
  return 'claimedAt' in patch ? ['claimed_at = NULL', 'claimed_by = NULL', 'lease_expires_at = NULL'] : [];
}

export interface TransitionOptions {
  id: string;
  to: TaskStatus;
  /** When given, the task must be in this status now. */
  from?: TaskStatus;
  fields?: TransitionFields;
  now: number;
}

export async function transitionTask(db: Queryable, opts: TransitionOptions): Promise<{ before: Task; after: Task }> {
  const before = await taskRow(db, opts.id);
  if (opts.from && before.status !== opts.from) {
    throw new MaestroError('ILLEGAL_TRANSITION', `Task ${opts.id} is ${before.status}, not ${opts.from}; cannot move it to ${opts.to}.`, {
      details: { taskId: opts.id, status: before.status, expected: opts.from, to: opts.to },
    });
  }
  const params: SqlValue[] = [opts.to];
  const sets = ['status = $1', ...claimSets(opts.to, before.status, opts.id), ...fieldSets(opts.fields ?? {}, params)];
  params.push(opts.now, opts.id, before.status);
  const n = params.length;
  const changed = await db.run(`UPDATE tasks SET ${sets.join(', ')}, updated_at = $${n - 2} WHERE id = $${n - 1} AND status = $${n}`, params);
  if (changed !== 1) throw new MaestroError('ILLEGAL_TRANSITION', `Task ${opts.id} changed status while moving to ${opts.to}; reload and try again.`);
  return { before, after: await getTask(db, opts.id) };
}
