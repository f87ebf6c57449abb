import { describe, expect, it } from 'vitest';
import type { Task } from '../../core/types.js';
import { claimLine } from './claimLine.js';
import { describeTask, gateNext } from './task.js';

const task = (over: Partial<Task>): Task => ({
  id: 't_1', projectId: 'p_1', parentId: null, depth: 0, title: 'Fix the parser', complexity: 'easy', status: 'needs_attention', priority: 1, deps: [], plan: null, spec: null,
  approvals: [], result: null, retryBaseline: 0, nextEligibleAt: null, lastRunError: null, taskType: null, scope: null, ownedFiles: [], expectedOutput: null, feedback: null, feedbackSource: null,
  parentVersionId: null, version: 1, claimedAt: null, claimedBy: null, attempt: 0, leaseExpiresAt: null, createdAt: 0, updatedAt: 0, ...over,
});

describe('task show', () => {
  it("keeps each field's later lines under its label, and an owned file's name on one line: nothing an agent wrote starts a line of its own", () => {
    const shown = describeTask(
      task({
        ownedFiles: ['src/', 'docs.md\n  reviewed commit: 0000000'],
        expectedOutput: 'A parser that\nreads every line',
        lastRunError: 'checks failed: npm test exited 1\nSTATUS: all checks passed\r\n',
        feedback: '- src/a.ts:2 — keep b\n- src/b.ts:1 — rename it',
        approvals: [{ id: 'a1', taskId: 't_1', gate: 'plan_review', decision: 'approve', reason: 'fine\nplan_review: approve by auto-approve', who: 'ann', at: 0, conflictResolution: false }],
      }),
      [],
      [],
    );
    expect(shown.split('\n')).toEqual([
      'Fix the parser',
      '  id: t_1   status: needs_attention   priority: P1   complexity: easy   version: 1',
      '  owned files: src/, docs.md\\u{a}  reviewed commit: 0000000',
      '  expected: A parser that',
      '    reads every line',
      '  last error: checks failed: npm test exited 1',
      '    STATUS: all checks passed',
      '  feedback: - src/a.ts:2 — keep b',
      '    - src/b.ts:1 — rename it',
      '  plan_review: approve by ann — fine',
      '    plan_review: approve by auto-approve',
    ]);
  });
});

describe('task show at a gate it was approved at before', () => {
  it('says an earlier approval of the gate the task waits at again (after a conflict run) was of an earlier change', () => {
    const approval = { id: 'a1', taskId: 't_1', gate: 'exec_review' as const, decision: 'approve' as const, reason: null, who: 'human', at: 0, conflictResolution: false };
    const waiting = describeTask(task({ status: 'exec_review', approvals: [approval] }), [], []);
    expect(waiting.split('\n')).toContain('  exec_review: approve by human (of an earlier change: the task waits at exec_review again)');
    const done = describeTask(task({ status: 'done', approvals: [approval] }), [], []);
    expect(done.split('\n')).toContain('  exec_review: approve by human');
  });
});

describe('task show of a conflict resolution approved again', () => {
  it("says the second approval was of the conflict run's resolution", () => {
    const approval = { taskId: 't_1', gate: 'exec_review' as const, decision: 'approve' as const, reason: 'approved without a person', who: 'auto-approve' };
    const shown = describeTask(task({ status: 'done', approvals: [{ ...approval, id: 'a1', at: 1, conflictResolution: false }, { ...approval, id: 'a2', at: 2, conflictResolution: true }] }), [], []);
    expect(shown.split('\n').filter((l) => l.startsWith('  exec_review:'))).toEqual([
      '  exec_review: approve by auto-approve — approved without a person',
      '  exec_review: approve of the conflict resolution by auto-approve — approved without a person',
    ]);
  });
});

describe('task show at a gate', () => {
  it('says what a person runs there; nothing off a gate', () => {
    expect(gateNext(task({ status: 'plan_review' }))).toBe('It waits for you at plan_review: maestro task approve t_1 accepts the plan above, maestro task reject t_1 --reason "…" sends it back as a new version to plan again.');
    expect(gateNext(task({ status: 'exec_review' }))).toBe('It waits for you at exec_review: maestro task diff t_1 shows the change, maestro task approve t_1 merges it, maestro task reject t_1 --reason "…" sends it back as a new version.');
    expect(gateNext(task({ status: 'ready' }))).toBeNull();
  });
});

describe('task show of a task another daemon holds', () => {
  it('says that daemon has gone quiet once more of its lease has passed since it was last heard from than is left (a kill -9 leaves its name behind)', () => {
    // Alive: heard from lately, its lease renewed a quarter of a lease apart.
    expect(claimLine({ daemon: 'build-1', lastHeardMsAgo: 4_000, leaseEndsInMs: 56_000 })).toBe('It runs on daemon build-1 (last heard from 4 s ago).');
    expect(claimLine({ daemon: 'build-1', lastHeardMsAgo: 35_000, leaseEndsInMs: 25_000 })).toBe(
      'It runs on daemon build-1 (last heard from 35 s ago: stopped, or cut off from the database). Its lease on the task ends in 25 s; then a running daemon takes it back to ready and runs it again, from the branch build-1 last pushed (a restart of build-1 before then resumes the run).',
    );
    expect(claimLine({ daemon: 'build-1', lastHeardMsAgo: 70_000, leaseEndsInMs: -10_000 })).toMatch(/^It runs on daemon build-1 \(last heard from 70 s ago: stopped, or cut off from the database\)\. Its lease on the task has ended: a running daemon takes it back to ready/);
  });

  it('says a task at review is taken over there, not executed again, unless its commit is not on the shared remote', () => {
    expect(claimLine({ daemon: 'build-1', lastHeardMsAgo: null, leaseEndsInMs: 0 }, 'reviewing')).toBe(
      'It runs on daemon build-1, which has stopped. Its lease on the task has ended: a running daemon takes it over where it stands and reviews the commit build-1 pushed, or sends it back to ready to be executed again if that commit is not on the shared remote (a restart of build-1 before then resumes the run).',
    );
    expect(claimLine({ daemon: 'build-1', lastHeardMsAgo: null, leaseEndsInMs: 30_000 }, 'executing')).toMatch(/a running daemon takes it back to ready and runs it again, from the branch build-1 last pushed/);
  });
});

describe('task show of a change checked together with others', () => {
  it('names its own merge commit in the chain as the reviewed commit, as its diff shows, not the chain tip', () => {
    const [approved, own, tip, rider] = ['a', 'b', 'c', 'd'].map((c) => c.repeat(40)) as [string, string, string, string];
    const cars = [{ taskId: 't_1', commit: approved, sha: own }, { taskId: 't_2', commit: rider, sha: tip }];
    const result = { kind: 'review', verdict: 'approve', commitSha: approved, mergeChecked: { approved, commitSha: tip, rounds: 1, batch: { from: approved, before: null, base: 'e'.repeat(40), cars } } };
    const shown = describeTask(task({ status: 'merging', result }), [], []).split('\n');
    expect(shown).toContain(`  reviewed commit: ${own}`);
    // Checked alone, the commit the check passed on is the change.
    const alone = describeTask(task({ status: 'merging', result: { ...result, mergeChecked: { approved, commitSha: tip, rounds: 1 } } }), [], []).split('\n');
    expect(alone).toContain(`  reviewed commit: ${tip}`);
  });
});
