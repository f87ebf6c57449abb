import { describe, expect, it } from 'vitest';
import { terminalLine } from '../../src/cli/commands/serve.js';

describe("maestro serve's terminal lines", () => {
  it('say a status change, a merge conflict and the start of a conflict run; nothing for other events', () => {
    const at = new Date(2026, 11, 2, 9, 30, 5).getTime();
    const title = 'Document the greeting';
    expect(terminalLine({ type: 'task.status', at, payload: { from: 'merging', to: 'done', reason: 'merged' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  merging → done  (merged)`);
    expect(terminalLine({ type: 'merge.conflict', at, payload: { branch: 'maestro/t_1-v1', message: 'CONFLICT (content): README.md' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  merge conflict on maestro/t_1-v1: a conflict run will resolve it`);
    expect(terminalLine({ type: 'run.started', at, payload: { kind: 'conflict' } }, title)).toBe(`09:30:05  ${title.padEnd(32)}  conflict run started`);
    expect(terminalLine({ type: 'run.started', at, payload: { kind: 'execute' } }, title)).toBeNull();
    expect(terminalLine({ type: 'run.phase', at, payload: {} }, title)).toBeNull();
  });
});
