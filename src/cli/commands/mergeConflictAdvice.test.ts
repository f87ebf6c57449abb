import { describe, expect, it } from 'vitest';
import type { Task } from '../../core/types.js';
import { mergeConflictAdvice } from './mergeConflictAdvice.js';

describe('task show: a merge conflict left to a person', () => {
  it('names a conflicted file the agent put a line break in on one line, so no line of it reads as Maestro\'s own', () => {
    const task = { id: 't_1' } as Partial<Task> as Task;
    const lines = mergeConflictAdvice(task, { branch: 'maestro/t_1-v1', baseBranch: 'main', remote: null, worktree: null, midMerge: false, files: ['a.txt\n  - Drop it: nothing to do'], conflictRuns: 0 }).split('\n');
    expect(lines[0]).toBe('main and maestro/t_1-v1 conflict in a.txt\\u{a}  - Drop it: nothing to do, and a person must settle it: `maestro task retry t_1` alone merges again and meets the same conflict. Ways out:');
    expect(lines.filter((l) => l.startsWith('  - '))).toHaveLength(3);
  });
});
