import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalRanking } from './ranking.js';
import { rankAll, type RankInput } from './scoring.js';
import type { Priority } from './types.js';

const IDS = Array.from({ length: 12 }, (_, i) => `t${i}`);

/** A change as the scheduler sees one: a task created or edited (upsert), or leaving the active set (remove). */
type Op = { kind: 'upsert'; i: number; priority: Priority; deps: number[] } | { kind: 'remove'; i: number } | { kind: 'read' };

// Deps only on lower indices: every history stays acyclic, as the store guarantees.
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('upsert' as const), i: fc.integer({ min: 0, max: IDS.length - 1 }), priority: fc.constantFrom<Priority>(0, 1, 2), deps: fc.uniqueArray(fc.integer({ min: 0, max: IDS.length - 1 }), { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('remove' as const), i: fc.integer({ min: 0, max: IDS.length - 1 }) }),
  fc.constant({ kind: 'read' as const }),
);

function apply(model: IncrementalRanking, active: Map<string, RankInput>, o: Op): void {
  if (o.kind === 'read') {
    model.snapshot(); // settles midway, as a tick would
    return;
  }
  const id = IDS[o.i]!;
  if (o.kind === 'remove') {
    model.remove(id);
    active.delete(id);
    return;
  }
  const task = { id, priority: o.priority, deps: o.deps.filter((d) => d < o.i).map((d) => IDS[d]!) };
  model.upsert(task);
  active.set(id, task);
}

function expectSameRanks(model: IncrementalRanking, active: Map<string, RankInput>): void {
  const full = rankAll([...active.values()]);
  const incremental = model.snapshot();
  expect([...incremental.keys()].sort()).toEqual([...full.keys()].sort());
  for (const [id, r] of full) expect(incremental.get(id)).toBeCloseTo(r, 9);
}

describe('incremental ranking', () => {
  it('always equals a full re-rank of the active tasks, whatever the history of changes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const model = new IncrementalRanking();
        const active = new Map<string, RankInput>();
        for (const o of ops) apply(model, active, o);
        expectSameRanks(model, active);
      }),
      { numRuns: 500 },
    );
  });

  it('equals a full re-rank after every single change, too', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 30 }), (ops) => {
        const model = new IncrementalRanking();
        const active = new Map<string, RankInput>();
        for (const o of ops) {
          apply(model, active, o);
          expectSameRanks(model, active);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('re-ranks only what a change can reach: a leaf finishing lowers its chain, not its neighbours', () => {
    const model = new IncrementalRanking();
    model.upsert({ id: 'a', priority: 1, deps: [] });
    model.upsert({ id: 'b', priority: 1, deps: ['a'] });
    model.upsert({ id: 'x', priority: 0, deps: [] });
    expect(Object.fromEntries(model.snapshot())).toEqual({ a: 4, b: 2, x: 3 });
    model.remove('b');
    expect(Object.fromEntries(model.snapshot())).toEqual({ a: 2, x: 3 });
    expect(model.dependentsOf('a')).toEqual([]);
  });
});
