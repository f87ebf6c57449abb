import { describe, expect, it } from 'vitest';
import type { Run, Task } from '../core/types.js';
import type { ResultRecord } from '../executor/protocol/outbox.js';
import { moveForResult, readableDetails } from './outcomes.js';

describe('readableDetails', () => {
  it('says a needs-attention record in words: findings as file:line message, numbers and strings as they are', () => {
    const details = { rounds: 3, findings: [{ severity: 'medium', file: 'src/a.ts', line: 2, message: 'add a comment' }, { severity: 'low', message: 'no test' }] };
    expect(readableDetails(details)).toBe('rounds 3, findings src/a.ts:2 add a comment; no test');
    expect(readableDetails({ files: ['a.ts', 'b.ts'], limit: { files: 10 } })).toBe('files a.ts; b.ts, limit {"files":10}');
    expect(readableDetails({ big: 'x'.repeat(5000) })).toHaveLength(2000);
  });
});

describe('a merge check that passed', () => {
  const approved = 'a'.repeat(40);
  const [x, y] = ['b'.repeat(40), 'e'.repeat(40)];
  const cars = (tip: string) => [{ taskId: 't_1', commit: approved, sha: 'c'.repeat(40) }, { taskId: 't_2', commit: 'd'.repeat(40), sha: tip }];
  const task = (mergeChecked?: Record<string, unknown>) => ({ id: 't_1', status: 'merging', result: { kind: 'review', verdict: 'approve', commitSha: approved, ...(mergeChecked ? { mergeChecked } : {}) } }) as unknown as Task;
  const passed = (baseSha: string) => ({ type: 'result', kind: 'merge_check', data: { commitSha: 'f'.repeat(40), baseSha, from: approved, batch: { cars: cars('f'.repeat(40)) }, checks: [] } }) as unknown as ResultRecord;
  const checked = (t: Task, base: string) => (moveForResult({ kind: 'merge_check' } as Run, t, passed(base)).fields?.result as { mergeChecked: Record<string, unknown> }).mergeChecked;

  it('counts the checks passed again on the same main (a batch whose change changed), and starts over when main moved', () => {
    const first = checked(task(), x);
    expect(first).toMatchObject({ rounds: 1, rechecks: 0, baseSha: x });
    const again = checked(task(first), x);
    expect(again).toMatchObject({ rounds: 1, rechecks: 1 });
    expect(checked(task(again), x)).toMatchObject({ rounds: 1, rechecks: 2 });
    expect(checked(task(again), y)).toMatchObject({ rounds: 2, rechecks: 0 });
  });
});
