/**
 * Property test of the claim protocol against a small model: random sequences
 * of claim / heartbeat / advance / complete / fail by a few owners, with time
 * passing and leases expiring. The real store must agree with the model after
 * every step, and:
 *   - at most one live owner at any time,
 *   - attempts only grow,
 *   - a stale owner (whose lease expired, or whose attempt is old) never
 *     completes, fails or heartbeats.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { DBAdapter } from '../../src/store/db.js';
import { createStore } from '../../src/store/store.js';
import { freshPostgres, freshSqlite, pgAvailable, removeTempDirs } from '../helpers/db.js';

const LEASE = 1000;
const OWNERS = ['A', 'B', 'C'] as const;
type Owner = (typeof OWNERS)[number];

type Op =
  | { op: 'claim' | 'heartbeat' | 'advance' | 'complete' | 'fail'; owner: Owner }
  | { op: 'tick'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom('claim', 'heartbeat', 'advance', 'complete', 'fail' as const), owner: fc.constantFrom(...OWNERS) }),
  fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 1500 }) }),
);

interface Model {
  status: 'ready' | 'queued' | 'executing' | 'exec_review';
  owner: Owner | null;
  attempt: number;
  lease: number | null;
  /** The attempt each owner believes it holds. */
  held: Partial<Record<Owner, number>>;
}

async function check(db: DBAdapter, ops: Op[], runIndex: number): Promise<void> {
  let now = 1_000_000;
  const store = createStore(db, () => now, { handClock: true }); // time moves by hand, on PostgreSQL too
  const p = await store.projects.create({ name: `model-${runIndex}`, repoPath: '/r' });
  const task = await store.tasks.create({ projectId: p.id, title: 'contested' });
  const m: Model = { status: 'ready', owner: null, attempt: 0, lease: null, held: {} };
  const live = (o: Owner) => m.owner === o && m.held[o] === m.attempt && m.lease !== null && m.lease >= now && (m.status === 'queued' || m.status === 'executing');
  let lastAttempt = 0;

  for (const step of ops) {
    if (step.op === 'tick') {
      now += step.ms;
      const expired = await store.tasks.expireClaims();
      const modelExpires = (m.status === 'queued' || m.status === 'executing') && m.lease !== null && m.lease < now;
      // Earlier runs' tasks share the database and may expire too; this run watches its own task.
      expect(expired.includes(task.id)).toBe(modelExpires);
      if (modelExpires) Object.assign(m, { status: 'ready', owner: null, lease: null });
    } else {
      const o = step.owner;
      const fence = { id: task.id, owner: o, attempt: m.held[o] ?? 0 };
      const wasLive = live(o);
      let won: boolean;
      switch (step.op) {
        case 'claim': {
          const r = await store.tasks.claim(task.id, o, LEASE);
          won = r.won;
          expect(won).toBe(m.status === 'ready');
          if (won) {
            m.attempt++;
            expect(r.attempt).toBe(m.attempt);
            Object.assign(m, { status: 'queued', owner: o, lease: now + LEASE });
            m.held[o] = m.attempt;
          }
          break;
        }
        case 'heartbeat':
          won = await store.tasks.heartbeat(fence, LEASE);
          expect(won).toBe(wasLive);
          if (won) m.lease = now + LEASE;
          break;
        case 'advance':
          won = await store.tasks.advance(fence, 'queued', 'executing');
          expect(won).toBe(wasLive && m.status === 'queued');
          if (won) m.status = 'executing';
          break;
        case 'complete':
          won = await store.tasks.advance(fence, 'executing', 'exec_review');
          expect(won).toBe(wasLive && m.status === 'executing');
          if (won) Object.assign(m, { status: 'exec_review', owner: null, lease: null });
          break;
        case 'fail':
          won = await store.tasks.fail(fence, 'failed', 0);
          expect(won).toBe(wasLive);
          if (won) Object.assign(m, { status: 'ready', owner: null, lease: null });
          break;
      }
      // A stale owner never gets anything through.
      if (step.op !== 'claim' && won) expect(wasLive).toBe(true);
    }
    const real = await store.tasks.get(task.id);
    expect({ status: real.status, owner: real.claimedBy, attempt: real.attempt, lease: real.leaseExpiresAt }).toEqual({
      status: m.status,
      owner: m.status === 'ready' ? null : m.owner,
      attempt: m.attempt,
      lease: m.lease,
    });
    expect(real.attempt).toBeGreaterThanOrEqual(lastAttempt);
    lastAttempt = real.attempt;
    const liveOwners = OWNERS.filter(live);
    expect(liveOwners.length).toBeLessThanOrEqual(1);
  }
}

describe('claim protocol against a model', () => {
  let db: DBAdapter | null = null;
  afterEach(async () => {
    await db?.close();
    db = null;
    removeTempDirs();
  });

  it('SQLite agrees with the model on random histories', async () => {
    db = (await freshSqlite()).db;
    let i = 0;
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => check(db!, ops, i++)), { numRuns: 150 });
  });

  it.skipIf(!pgAvailable())('PostgreSQL agrees with the model on random histories', async () => {
    db = (await freshPostgres()).db;
    let i = 0;
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), (ops) => check(db!, ops, i++)), { numRuns: 40 });
  });
});
