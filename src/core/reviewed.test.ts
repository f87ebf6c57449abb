import { describe, expect, it } from 'vitest';
import { nextCheck } from './reviewed.js';
import type { Task } from './types.js';

const checkRound = (task: Task, base: string) => nextCheck(task, base).round;

const approved = 'a'.repeat(40);
const withCheck = (mergeChecked: Record<string, unknown> | undefined) => ({ result: { kind: 'review', verdict: 'approve', commitSha: approved, ...(mergeChecked ? { mergeChecked } : {}) } }) as unknown as Task;

describe('nextCheck: the round', () => {
  it('counts a merge check as a new round only when main moved since the one that passed', () => {
    expect(checkRound(withCheck(undefined), 'b1')).toBe(1);
    const passed = { approved, commitSha: 'c'.repeat(40), rounds: 2, baseSha: 'b2' };
    // A batch checked again on the same main (a rider changed): the same round, so no person is asked "main moved again".
    expect(checkRound(withCheck(passed), 'b2')).toBe(2);
    expect(checkRound(withCheck(passed), 'b3')).toBe(3);
    // The rounds start over after a person's retry (0 kept): the next check is the first.
    expect(checkRound(withCheck({ ...passed, rounds: 0 }), 'b2')).toBe(1);
    // A check recorded before its base was: counted as before.
    expect(checkRound(withCheck({ approved, commitSha: 'c'.repeat(40), rounds: 1 }), 'b2')).toBe(2);
    // A check of an older approval does not count.
    expect(checkRound(withCheck({ ...passed, approved: 'd'.repeat(40) }), 'b2')).toBe(1);
  });
});
