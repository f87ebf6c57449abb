/**
 * Where a task version stands among its versions, as the store holds it.
 *
 * A person who rejects a task at a gate (or retries it from the current main) makes a new version of it: a new
 * task id, so a new knowledge session (`task-<id>`), while the old version's session keeps the candidates its runs
 * staged. What an agent learned in a rejected try can still be true, so those candidates stay in the review queue,
 * for a person to decide; but the person should know where they come from. Every fact of it is in the task rows:
 * the old version is `superseded`, the next one names it (`parentVersionId`) and carries why (`feedbackSource`,
 * migration 009: the gate, who and the reason of a rejection, or who retried it and the error it stopped on) and
 * when (its `createdAt`). So every daemon on one database says the same, wherever the session's folder is.
 * Versions made before 009 have no feedbackSource: the old version's own status event says who and why
 * (store/ops/supersededVersions.ts).
 */
import type { FeedbackSource, Gate } from './types.js';

/** A session's task version that a newer one replaced, and why. */
export interface SupersededVersion {
  task_id: string;
  version: number;
  /** rejected: a person rejected it at `gate`; retried: a person retried it from the current main. */
  cause: 'rejected' | 'retried';
  gate: string | null;
  reason: string;
  who: string;
  at: string;
  superseded_by: { task_id: string; version: number; session_id: string };
}

/**
 * Whether a staged candidate is still a person's to decide: pending or a draft, and not an exact duplicate of an
 * entry (those are rejected on their own when their run is sealed: knowledge/lifecycle/session/ops.ts suppressExact).
 * A replaced version's session asks a person to decide its candidates only while one is left.
 */
export function leftToDecide(c: { status: string; disposition: string | null; promotion_eligibility: string | null }): boolean {
  return (c.status === 'pending' || c.status === 'draft') && !(c.disposition === 'exact_duplicate' && c.promotion_eligibility === 'suppressed');
}

/** Session ids are path segments `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`: `task-<task id>`. */
export function sessionIdFor(taskId: string): string {
  return `task-${slug(taskId)}`;
}

/** A run's folder name in its session: its id as a path segment. */
export function runIdFor(runId: string): string {
  return slug(runId);
}

function slug(x: string): string {
  return x.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100) || 'x';
}

/** The task id a task's session id names (store/rows.ts newId: `t_` and 16 hex digits), or null for any other session. */
export function taskIdOfSession(sid: string): string | null {
  const hex = /^task-t-([0-9a-f]{16})$/.exec(sid)?.[1];
  return hex ? `t_${hex}` : null;
}

/** Why the version was replaced, as the store has it: the next version's feedbackSource, else (before 009) the old one's status event. */
export type SupersededWhy =
  | { source: FeedbackSource }
  | { event: { gate?: unknown; decision?: unknown; who?: unknown; reason?: unknown }; lastRunError: string | null };

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const neededAttention = (error: string | null) => (error ? `it needed attention: ${error}` : 'it needed attention');

export function supersededVersion(old: { id: string; version: number }, next: { id: string; version: number; createdAt: number }, why: SupersededWhy): SupersededVersion {
  let cause: SupersededVersion['cause'];
  let gate: Gate | string | null = null;
  let reason: string;
  let who: string;
  if ('source' in why) {
    const s = why.source;
    if (s.kind === 'rejection') [cause, gate, reason, who] = ['rejected', s.gate, s.reason, s.who];
    else [cause, reason, who] = ['retried', neededAttention(s.error), s.who];
  } else {
    const e = why.event;
    const rejected = e.decision === 'reject';
    cause = rejected ? 'rejected' : 'retried';
    gate = rejected ? text(e.gate) : null;
    reason = rejected ? (text(e.reason) ?? '') : neededAttention(why.lastRunError ? why.lastRunError.slice(0, 1000) : null);
    who = text(e.who) ?? 'human';
  }
  return {
    task_id: old.id,
    version: old.version,
    cause,
    gate,
    reason,
    who,
    at: new Date(next.createdAt).toISOString(),
    superseded_by: { task_id: next.id, version: next.version, session_id: sessionIdFor(next.id) },
  };
}
