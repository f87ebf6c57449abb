import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestSpecification, Vitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { PlannedSequencer, planOrder } from './sequencer.js';

const file = (name: string, seconds: number, fillsMachine = false, size = 1) => ({ spec: { moduleId: name } as TestSpecification, seconds, fillsMachine, size });
const names = (files: ReturnType<typeof file>[]) => files.map((f) => f.spec.moduleId);

describe('the planned order of the test files', () => {
  it('starts a suite that fills the machine only once the one before it has ended, the other worker taking the rest meanwhile', () => {
    const lights = Array.from({ length: 10 }, (_, i) => file(`light${i}`, 20, false, 100 - i));
    const order = planOrder([...lights.slice(0, 4), file('crash', 50, true), ...lights.slice(4), file('multihost', 100, true)], 2);
    expect(names(order)).toEqual(['multihost', 'light0', 'light1', 'light2', 'light3', 'light4', 'crash', 'light5', 'light6', 'light7', 'light8', 'light9']);
  });

  it('puts the longest first among the rest, and the larger source first where the seconds are the same', () => {
    const order = planOrder([file('a', 4, false, 10), file('b', 30), file('c', 4, false, 50)], 2);
    expect(names(order)).toEqual(['b', 'c', 'a']);
  });

  it('ends with the suites that fill the machine when nothing else is left to run beside them', () => {
    const order = planOrder([file('x', 10, true), file('y', 20, true), file('z', 5)], 2);
    expect(names(order)).toEqual(['y', 'z', 'x']);
  });

  it("as Vitest calls it: each file named by its path from the root, Vitest's record of its last run before the table", async () => {
    const root = mkdtempSync(join(tmpdir(), 'maestro-sequencer-'));
    try {
      // a.test.ts the larger source: without a record of b's last run, a would go first among the rest.
      const sources: Record<string, number> = { 'test/multihost/multihost.test.ts': 10, 'test/daemon/crash.test.ts': 10, 'src/a.test.ts': 900, 'src/b.test.ts': 100 };
      for (const [path, size] of Object.entries(sources)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), 'x'.repeat(size));
      }
      const recorded: Record<string, number> = { ':src/b.test.ts': 500_000 };
      const sort = (record: Record<string, number>) => {
        const ctx = { config: { root, maxWorkers: 2 }, cache: { getFileTestResults: (key: string) => (key in record ? { duration: record[key] } : undefined) } };
        const spec = (path: string) => ({ moduleId: join(root, path), project: { name: '', config: { sequence: { groupOrder: 0 } } } }) as unknown as TestSpecification;
        return new PlannedSequencer(ctx as unknown as Vitest).sort(Object.keys(sources).map(spec));
      };
      const relative = async (record: Record<string, number>) => (await sort(record)).map((s) => s.moduleId.slice(root.length + 1));
      // The table knows multihost (180 s) and crash (105 s) fill the machine: they never start side by side.
      expect(await relative({})).toEqual(['test/multihost/multihost.test.ts', 'src/a.test.ts', 'src/b.test.ts', 'test/daemon/crash.test.ts']);
      // b's last run took 500 s: it goes beside multihost, crash after multihost, a last.
      expect(await relative(recorded)).toEqual(['test/multihost/multihost.test.ts', 'src/b.test.ts', 'test/daemon/crash.test.ts', 'src/a.test.ts']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
