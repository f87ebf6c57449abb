import { describe, expect, it } from 'vitest';
import { MaestroError } from './errors.js';
import { EDITABLE_STATUSES, TASK_STATUSES, TRANSITIONS, assertTransition, canTransition, statusAfterApproval, transitionPatch, type TaskStatus } from './status.js';

const legalPairs: [TaskStatus, TaskStatus][] = [];
const illegalPairs: [TaskStatus, TaskStatus][] = [];
for (const from of TASK_STATUSES) for (const to of TASK_STATUSES) (TRANSITIONS[from].includes(to) ? legalPairs : illegalPairs).push([from, to]);

describe('task status machine', () => {
  it('has the main path of the design', () => {
    const path: TaskStatus[] = ['ready', 'queued', 'planning', 'plan_review', 'executing', 'awaiting_input', 'executing', 'reviewing', 'exec_review', 'merging', 'done'];
    for (let i = 1; i < path.length; i++) expect(canTransition(path[i - 1]!, path[i]!)).toBe(true);
  });

  it.each(legalPairs)('allows %s → %s', (from, to) => {
    expect(() => assertTransition(from, to)).not.toThrow();
    expect(transitionPatch(from, to).status).toBe(to);
  });

  it.each(illegalPairs)('refuses %s → %s with a coded error', (from, to) => {
    let caught: unknown;
    try {
      assertTransition(from, to, 't-1');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(MaestroError);
    const e = caught as MaestroError;
    expect(e.code).toBe('ILLEGAL_TRANSITION');
    expect(e.message).toContain(`from ${from} to ${to}`);
    expect(e.message).toContain('t-1');
  });

  it('clears the claim on every transition to ready', () => {
    const toReady = legalPairs.filter(([, to]) => to === 'ready');
    expect(toReady.length).toBeGreaterThan(5);
    for (const [from] of toReady) expect(transitionPatch(from, 'ready')).toEqual({ status: 'ready', claimedAt: null, claimedBy: null, leaseExpiresAt: null });
    expect(transitionPatch('ready', 'queued')).toEqual({ status: 'queued' });
  });

  it('done and superseded are final; no self loops', () => {
    expect(TRANSITIONS.done).toEqual([]);
    expect(TRANSITIONS.superseded).toEqual([]);
    for (const s of TASK_STATUSES) expect(canTransition(s, s)).toBe(false);
  });

  it('a person edits a task at rest: waiting, at a gate, parked or cancelled; not in flight, not once final', () => {
    expect(EDITABLE_STATUSES).toEqual(['ready', 'plan_review', 'spec_review', 'waiting_children', 'exec_review', 'needs_attention', 'cancelled']);
  });

  it('moves an approved gate to its next status', () => {
    expect(statusAfterApproval('plan_review', false)).toBe('ready');
    expect(statusAfterApproval('plan_review', true)).toBe('waiting_children');
    expect(statusAfterApproval('exec_review', false)).toBe('merging');
  });
});
