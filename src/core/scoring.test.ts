import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertAcyclic, findCycle } from './dag.js';
import { MaestroError } from './errors.js';
import { agingBonus, baseScore, chainInertia, couplingPenalty, naiveRankU, rankAll, scheduleScore, type RankInput } from './scoring.js';
import type { Priority } from './types.js';

const HOUR = 3600_000;
const t = (id: string, priority: Priority, deps: string[] = []): RankInput => ({ id, priority, deps });

function naiveAll(tasks: RankInput[]): Map<string, number> {
  const byId = new Map(tasks.map((x) => [x.id, x]));
  const dependents = new Map<string, string[]>();
  for (const x of tasks) for (const d of x.deps) dependents.set(d, [...(dependents.get(d) ?? []), x.id]);
  return new Map(tasks.map((x) => [x.id, naiveRankU(x.id, byId, dependents, new Map())]));
}

describe('rankU', () => {
  it('base scores P0=3, P1=2, P2=1', () => {
    expect([0, 1, 2].map((p) => baseScore({ priority: p as Priority }))).toEqual([3, 2, 1]);
  });

  it('ranks a chain: each task carries everything after it', () => {
    // a ← b ← c (c depends on b, b on a)
    const r = rankAll([t('a', 2), t('b', 1, ['a']), t('c', 0, ['b'])]);
    expect(Object.fromEntries(r)).toEqual({ c: 3, b: 5, a: 6 });
  });

  it('ranks a diamond: the root counts both branches', () => {
    //   a ← b, a ← c, d ← b and c
    const r = rankAll([t('a', 2), t('b', 1, ['a']), t('c', 2, ['a']), t('d', 0, ['b', 'c'])]);
    expect(r.get('d')).toBe(3);
    expect(r.get('b')).toBe(5);
    expect(r.get('c')).toBe(4);
    expect(r.get('a')).toBe(1 + 5 + 4);
  });

  it('ranks a fan-out: a task that unlocks many ranks above them all', () => {
    const leaves = Array.from({ length: 5 }, (_, i) => t(`l${i}`, 1, ['root']));
    const r = rankAll([t('root', 2), ...leaves]);
    expect(r.get('root')).toBe(1 + 5 * 2);
    for (const l of leaves) expect(r.get(l.id)).toBe(2);
  });

  it('ignores dependencies outside the set', () => {
    expect(rankAll([t('a', 0, ['elsewhere'])]).get('a')).toBe(3);
  });

  it('equals the naive recursion on random DAGs', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom<Priority>(0, 1, 2), fc.array(fc.nat(), { maxLength: 4 })), { minLength: 1, maxLength: 40 }), (spec) => {
        const tasks = spec.map(([p, deps], i) => t(`t${i}`, p, i === 0 ? [] : [...new Set(deps.map((d) => `t${d % i}`))]));
        expect(rankAll(tasks)).toEqual(naiveAll(tasks));
      }),
    );
  });

  it('refuses a cycle and names the tasks on it', () => {
    try {
      rankAll([t('a', 0, ['c']), t('b', 0, ['a']), t('c', 0, ['b']), t('d', 0)]);
      expect.unreachable();
    } catch (err) {
      expect((err as MaestroError).code).toBe('DEPENDENCY_CYCLE');
      expect((err as MaestroError).details?.tasks).toEqual(['a', 'b', 'c']);
    }
  });
});

describe('cycle detection', () => {
  it('returns null for a DAG', () => {
    expect(findCycle([t('a', 0), t('b', 0, ['a']), t('c', 0, ['a', 'b'])])).toBeNull();
  });
  it('names the cycle as a closed path', () => {
    expect(findCycle([t('a', 0, ['b']), t('b', 0, ['c']), t('c', 0, ['a'])])).toEqual(['a', 'b', 'c', 'a']);
  });
  it('finds a self-dependency', () => {
    expect(findCycle([t('a', 0, ['a'])])).toEqual(['a', 'a']);
  });
  it('throws a coded error with titles', () => {
    expect(() => assertAcyclic([t('a', 0, ['b']), t('b', 0, ['a'])], new Map([['a', 'Schema']]))).toThrow(/a \(Schema\) → b → a/);
  });
  it('handles a 20,000-long chain without overflowing the stack', () => {
    const chain = Array.from({ length: 20_000 }, (_, i) => t(`n${i}`, 2, i ? [`n${i - 1}`] : []));
    expect(findCycle(chain)).toBeNull();
  });
});

describe('aging, coupling, inertia and the total', () => {
  it('aging grows by 1/48 per hour and stops at the base', () => {
    const task = { priority: 1 as Priority, createdAt: 0 };
    expect(agingBonus(task, 0)).toBe(0);
    expect(agingBonus(task, 24 * HOUR)).toBeCloseTo(0.5);
    expect(agingBonus(task, 96 * HOUR)).toBe(2);
    expect(agingBonus({ priority: 2, createdAt: 0 }, 1000 * HOUR)).toBe(1);
    expect(agingBonus(task, -HOUR)).toBe(0);
  });

  it('coupling costs 0.5 per file shared with each in-flight task', () => {
    const task = { ownedFiles: ['a.ts', 'b.ts', 'c.ts'] };
    expect(couplingPenalty(task, [])).toBe(0);
    expect(couplingPenalty(task, [{ ownedFiles: ['a.ts'] }, { ownedFiles: ['a.ts', 'b.ts', 'z.ts'] }])).toBe(1.5);
    expect(couplingPenalty({ ownedFiles: [] }, [{ ownedFiles: ['a.ts'] }])).toBe(0);
  });

  it('chain inertia sums the base of completed dependencies', () => {
    expect(chainInertia([{ priority: 0 }, { priority: 2 }])).toBe(4);
  });

  it('scheduleScore adds the parts and returns the breakdown', () => {
    const s = scheduleScore({
      task: { priority: 0, createdAt: 0, ownedFiles: ['x.ts'] },
      rankU: 7,
      completedDeps: [{ priority: 1 }],
      inFlight: [{ ownedFiles: ['x.ts'] }],
      now: 24 * HOUR,
    });
    expect(s.breakdown).toEqual({ rankU: 7, chainInertia: 2, agingBonus: 0.5, couplingPenalty: 0.5 });
    expect(s.score).toBe(9);
  });
});
