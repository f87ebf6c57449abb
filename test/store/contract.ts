/**
 * The store contract: ONE suite both engines must pass. Each case gets a
 * freshly migrated database of its own and an injected clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MaestroError, type ErrorCode } from '../../src/core/errors.js';
import type { DBAdapter } from '../../src/store/db.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/migrations/index.js';
import { migrate } from '../../src/store/migrate.js';
import { createStore, type Store } from '../../src/store/store.js';
import { beatDaemon, registerDaemon } from '../../src/store/ops/daemons.js';
import { removeTempDirs } from '../helpers/db.js';

const MINUTE = 60_000;

export async function expectCode(p: Promise<unknown>, code: ErrorCode, text?: RegExp): Promise<MaestroError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(MaestroError);
    expect((err as MaestroError).code).toBe(code);
    if (text) expect((err as MaestroError).message).toMatch(text);
    return err as MaestroError;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

/** Everything the store holds, to show a refused call changed nothing. */
export async function snapshot(db: DBAdapter) {
  const tables = ['projects', 'tasks', 'runs', 'approvals', 'events'];
  const out: Record<string, unknown[]> = {};
  for (const t of tables) out[t] = await db.all(`SELECT * FROM ${t} ORDER BY 1`);
  return out;
}

export function defineStoreContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`store contract: ${label}`, () => {
    let db: DBAdapter;
    let store: Store;
    let now: number;
    beforeEach(async () => {
      ({ db } = await fresh());
      now = 1_700_000_000_000;
      // Leases go by this clock on PostgreSQL too (not the database's): the cases move time by hand. The database's
      // clock is tested in test/multihost/leaseClocks.test.ts.
      store = createStore(db, () => now, { handClock: true });
    });
    afterEach(async () => {
      await db.close();
      removeTempDirs();
    });

    async function project(name = 'demo') {
      return store.projects.create({ name, repoPath: `/repos/${name}` });
    }

    it('is migrated to the latest version, and migrating again applies nothing', async () => {
      const again = await migrate(db);
      expect(again).toEqual({ applied: [], version: LATEST_SCHEMA_VERSION });
    });

    it('refuses a database whose schema is newer than this build, changing nothing', async () => {
      await db.run(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)`, [LATEST_SCHEMA_VERSION + 1]);
      const before = await db.all(`SELECT * FROM schema_migrations ORDER BY version`);
      await expectCode(migrate(db), 'SCHEMA_TOO_NEW', /newer than this Maestro knows/);
      expect(await db.all(`SELECT * FROM schema_migrations ORDER BY version`)).toEqual(before);
    });

    it('creates, finds and lists projects; a duplicate name or bad input is refused', async () => {
      const p = await project();
      expect(await store.projects.get(p.id)).toEqual(p);
      expect(await store.projects.get('demo')).toEqual(p);
      expect(await store.projects.list()).toEqual([p]);
      const before = await snapshot(db);
      await expectCode(project(), 'DUPLICATE_PROJECT', /"demo" already exists/);
      await expectCode(store.projects.create({ name: '', repoPath: '/x' }), 'BAD_INPUT', /name/);
      // A name shaped like another project's id would hide it from commands that take an id or a name.
      await expectCode(store.projects.create({ name: p.id.replace(/.$/, '0'), repoPath: '/x' }), 'BAD_INPUT', /name: must not look like a project id/);
      await expectCode(store.projects.get('nope'), 'UNKNOWN_PROJECT', /"nope"/);
      expect(await snapshot(db)).toEqual(before);
    });

    it('creates a task with every field and logs it', async () => {
      const p = await project();
      const a = await store.tasks.create({ projectId: p.id, title: 'Schema' });
      now += 1;
      const b = await store.tasks.create({
        projectId: p.id,
        title: 'Repo',
        complexity: 'hard',
        priority: 0,
        deps: [a.id],
        taskType: 'feature',
        scope: 'module',
        ownedFiles: ['src/repo.ts'],
        expectedOutput: 'CRUD passes',
        parentId: a.id,
      });
      const got = await store.tasks.get(b.id);
      expect(got).toMatchObject({
        projectId: p.id, title: 'Repo', complexity: 'hard', priority: 0, deps: [a.id], status: 'ready', taskType: 'feature', scope: 'module',
        ownedFiles: ['src/repo.ts'], expectedOutput: 'CRUD passes', parentId: a.id, depth: 1, version: 1, parentVersionId: null,
        claimedAt: null, claimedBy: null, attempt: 0, createdAt: now, updatedAt: now, approvals: [],
      });
      expect((await store.tasks.list({ projectId: p.id })).map((t) => t.id)).toEqual([a.id, b.id]);
      expect((await store.tasks.list({ parentId: a.id })).map((t) => t.id)).toEqual([b.id]);
      const { events } = await store.events.list({ taskId: b.id });
      expect(events.map((e) => e.type)).toEqual(['task.created']);
    });

    it('refuses unknown ids, unknown and cross-project dependencies, and bad fields, changing nothing', async () => {
      const p = await project();
      const q = await project('other');
      const foreign = await store.tasks.create({ projectId: q.id, title: 'Elsewhere' });
      const before = await snapshot(db);
      await expectCode(store.tasks.create({ projectId: 'p_missing', title: 'x' }), 'UNKNOWN_PROJECT');
      await expectCode(store.tasks.create({ projectId: p.id, title: 'x', deps: ['t_missing'] }), 'UNKNOWN_TASK', /t_missing/);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'x', deps: [foreign.id] }), 'CROSS_PROJECT_DEPENDENCY', new RegExp(foreign.id));
      await expectCode(store.tasks.create({ projectId: p.id, title: '   ' }), 'BAD_INPUT', /title/);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'x', priority: 7 } as never), 'BAD_INPUT', /priority/);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'x', ownedFiles: ['../etc/passwd'] }), 'BAD_INPUT', /ownedFiles/);
      await expectCode(store.tasks.get('t_missing'), 'UNKNOWN_TASK');
      await expectCode(store.tasks.create({ projectId: p.id, title: 'NUL', ownedFiles: ['a\u0000b'] }), 'BAD_INPUT', /ownedFiles\.0: must not contain control characters/);
      expect(await snapshot(db)).toEqual(before);
    });

    it('refuses a self-dependency and a cycle on edit, naming the cycle, changing nothing', async () => {
      const p = await project();
      const a = await store.tasks.create({ projectId: p.id, title: 'A' });
      const b = await store.tasks.create({ projectId: p.id, title: 'B', deps: [a.id] });
      const c = await store.tasks.create({ projectId: p.id, title: 'C', deps: [b.id] });
      const before = await snapshot(db);
      await expectCode(store.tasks.edit(a.id, { deps: [a.id] }), 'SELF_DEPENDENCY');
      const err = await expectCode(store.tasks.edit(a.id, { deps: [c.id] }), 'DEPENDENCY_CYCLE');
      expect(err.message).toContain(`${a.id} (A) → ${c.id} (C) → ${b.id} (B) → ${a.id} (A)`);
      expect(await snapshot(db)).toEqual(before);
      const edited = await store.tasks.edit(c.id, { deps: [a.id, b.id], title: 'C2' });
      expect(edited).toMatchObject({ deps: [a.id, b.id], title: 'C2' });
    });

    it('refuses a dependency on a cancelled task (it would wait for good), at creation and in an edit', async () => {
      const p = await project();
      const gone = await store.tasks.create({ projectId: p.id, title: 'Gone' });
      await store.tasks.transition(gone.id, 'cancelled');
      const other = await store.tasks.create({ projectId: p.id, title: 'Other' });
      const before = await snapshot(db);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'Waits', deps: [gone.id] }), 'BAD_INPUT', new RegExp(`Dependency ${gone.id} is cancelled`));
      await expectCode(store.tasks.edit(other.id, { deps: [gone.id] }), 'BAD_INPUT', /maestro task retry/);
      expect(await snapshot(db)).toEqual(before);
    });

    it('refuses a parent that is done or cancelled (its new subtask would run outside it), changing nothing', async () => {
      const p = await project();
      const done = await store.tasks.create({ projectId: p.id, title: 'Done' });
      for (const status of ['queued', 'executing', 'exec_review', 'merging', 'done'] as const) await store.tasks.transition(done.id, status);
      const gone = await store.tasks.create({ projectId: p.id, title: 'Gone' });
      await store.tasks.transition(gone.id, 'cancelled');
      const before = await snapshot(db);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'Late', parentId: done.id }), 'BAD_INPUT', new RegExp(`^Parent ${done.id} is done: a subtask created now would run outside it \\(a parent is done only when all its subtasks are\\)\\. Create the task without a parent\\. Nothing was created\\.$`));
      await expectCode(store.tasks.create({ projectId: p.id, title: 'Late', parentId: gone.id }), 'BAD_INPUT', new RegExp(`^Parent ${gone.id} is cancelled: .* without a parent, or retry the parent first \\(maestro task retry ${gone.id}\\)\\. Nothing was created\\.$`));
      expect(await snapshot(db)).toEqual(before);
    });

    it('an edit changes only the fields it names: the others keep their values, and the event names only those', async () => {
      const p = await project();
      const dep = await store.tasks.create({ projectId: p.id, title: 'Dep' });
      const full = { projectId: p.id, title: 'Full', deps: [dep.id], priority: 0 as const, complexity: 'hard' as const, plan: 'my plan', spec: 'my spec', taskType: 'feature' as const, scope: 'module' as const, ownedFiles: ['src/x.ts'], expectedOutput: 'an x' };
      const t = await store.tasks.create(full);
      const { projectId: _, ...fields } = full;
      expect(await store.tasks.edit(t.id, { title: 'Renamed' })).toMatchObject({ ...fields, title: 'Renamed' });
      expect(await store.tasks.edit(t.id, {})).toMatchObject({ ...fields, title: 'Renamed' });
      expect(await store.tasks.edit(t.id, { plan: null, ownedFiles: [] })).toMatchObject({ ...fields, title: 'Renamed', plan: null, ownedFiles: [] });
      const edits = (await store.events.list({ taskId: t.id, type: 'task.edited' })).events.map((e) => e.payload);
      expect(edits).toEqual([{ fields: ['title'] }, { fields: [] }, { fields: ['plan', 'ownedFiles'] }]);
    });

    it('walks the status machine, logs each step, and refuses illegal moves', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Walk' });
      await expectCode(store.tasks.transition(t.id, 'done'), 'ILLEGAL_TRANSITION', /from ready to done/);
      await expectCode(store.tasks.transition(t.id, 'queued', { from: 'planning' }), 'ILLEGAL_TRANSITION', /not planning/);
      for (const s of ['queued', 'planning', 'plan_review'] as const) await store.tasks.transition(t.id, s);
      const { events } = await store.events.list({ taskId: t.id, type: 'task.status' });
      expect(events.map((e) => e.payload)).toEqual([
        { from: 'ready', to: 'queued' },
        { from: 'queued', to: 'planning' },
        { from: 'planning', to: 'plan_review' },
      ]);
      expect((await store.tasks.get(t.id)).status).toBe('plan_review');
    });

    it('refuses edits while a run is in flight', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Busy' });
      await store.tasks.claim(t.id, 'w1', MINUTE);
      await expectCode(store.tasks.edit(t.id, { title: 'changed' }), 'TASK_BUSY', /read-only/);
      expect((await store.tasks.get(t.id)).title).toBe('Busy');
    });

    it('claims the best free tasks of a ranked slice within the limits, each with its decision and event', async () => {
      const p = await project();
      const q = await project('other');
      const [a, b, c] = [await store.tasks.create({ projectId: p.id, title: 'a' }), await store.tasks.create({ projectId: p.id, title: 'b' }), await store.tasks.create({ projectId: p.id, title: 'c' })];
      const d = await store.tasks.create({ projectId: q.id, title: 'd' });
      await store.tasks.claim(b.id, 'someone', MINUTE);
      const slice = [b, a, d, c].map((t) => ({ id: t.id, projectId: t.projectId }));
      const breakdown = { rankU: 5, chainInertia: 1, agingBonus: 1, couplingPenalty: 0 };
      const won = await store.tasks.claimBest({
        ranked: slice,
        owner: 'w',
        leaseMs: MINUTE,
        max: 2,
        perProject: (id) => (id === p.id ? 1 : 5),
        decisionFor: (id) => (id === a.id ? { score: 7, breakdown, competitors: [{ taskId: c.id, score: 1 }] } : undefined),
      });
      // b is held by someone else: a (best of p, whose limit is 1) and d.
      expect(won).toEqual([{ id: a.id, projectId: p.id, attempt: 1 }, { id: d.id, projectId: q.id, attempt: 1 }]);
      expect((await store.tasks.get(a.id)).claimedBy).toBe('w');
      expect((await store.tasks.get(c.id)).status).toBe('ready');
      const statusOf = async (id: string) => (await store.events.list({ taskId: id, type: 'task.status' })).events.map((e) => e.payload);
      expect(await statusOf(a.id)).toEqual([{ from: 'ready', to: 'queued', owner: 'w', attempt: 1, score: 7 }]);
      expect(await statusOf(d.id)).toEqual([{ from: 'ready', to: 'queued', owner: 'w', attempt: 1 }]);
      const decisions = await store.decisions.list({ projectId: p.id });
      expect(decisions.map((x) => [x.taskId, x.owner, x.score, x.breakdown, x.competitors])).toEqual([[a.id, 'w', 7, breakdown, [{ taskId: c.id, score: 1 }]]]);
      expect(await store.decisions.list({ taskId: d.id })).toEqual([]);
      // Nothing free, nothing asked: nothing claimed.
      expect(await store.tasks.claimBest({ ranked: slice.slice(0, 3), owner: 'w', leaseMs: MINUTE, max: 4 })).toEqual([]);
      expect(await store.tasks.claimBest({ ranked: slice, owner: 'w', leaseMs: MINUTE, max: 0 })).toEqual([]);
    });

    it('claims by compare-and-set: one winner, attempts grow, backoff and requeue respected', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Claim me' });
      expect((await store.tasks.claimable()).map((x) => x.id)).toEqual([t.id]);
      const [a, b] = await Promise.all([store.tasks.claim(t.id, 'A', MINUTE), store.tasks.claim(t.id, 'B', MINUTE)]);
      expect([a.won, b.won].filter(Boolean)).toHaveLength(1);
      const winner = a.won ? 'A' : 'B';
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'queued', claimedBy: winner, claimedAt: now, attempt: 1, leaseExpiresAt: now + MINUTE });
      expect(await store.tasks.claimable()).toEqual([]);
      // Failing puts it back to ready with a backoff; claimedAt is cleared so it can be claimed again later.
      expect(await store.tasks.fail({ id: t.id, owner: winner, attempt: 1 }, 'boom', 5 * MINUTE)).toBe(true);
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'ready', claimedAt: null, claimedBy: null, lastRunError: 'boom', nextEligibleAt: now + 5 * MINUTE });
      expect((await store.tasks.claim(t.id, 'C', MINUTE)).won).toBe(false);
      now += 5 * MINUTE;
      expect(await store.tasks.claim(t.id, 'C', MINUTE)).toEqual({ won: true, attempt: 2 });
    });

    it('expires a silent claimer; the stale claimer can never complete, fail or heartbeat', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Lease' });
      const first = await store.tasks.claim(t.id, 'A', MINUTE);
      now += 30_000;
      expect(await store.tasks.heartbeat({ id: t.id, owner: 'A', attempt: first.attempt }, MINUTE)).toBe(true);
      // The heartbeat moved the lease to claim + 30 s + 60 s.
      now += 59_000;
      expect(await store.tasks.expireClaims()).toEqual([]);
      now += 1_000;
      expect(await store.tasks.expireClaims()).toEqual([]);
      now += 1;
      expect(await store.tasks.expireClaims()).toEqual([t.id]);
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'ready', claimedAt: null, claimedBy: null });
      const second = await store.tasks.claim(t.id, 'B', MINUTE);
      expect(second).toEqual({ won: true, attempt: 2 });
      const staleA = { id: t.id, owner: 'A', attempt: first.attempt };
      expect(await store.tasks.heartbeat(staleA, MINUTE)).toBe(false);
      expect(await store.tasks.advance(staleA, 'queued', 'executing')).toBe(false);
      expect(await store.tasks.fail(staleA, 'late', 0)).toBe(false);
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'queued', claimedBy: 'B', attempt: 2 });
      const b = { id: t.id, owner: 'B', attempt: 2 };
      expect(await store.tasks.advance(b, 'queued', 'executing')).toBe(true);
      expect(await store.tasks.advance(b, 'executing', 'exec_review', { result: { sha: 'abc' } })).toBe(true);
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'exec_review', claimedBy: null, leaseExpiresAt: null, result: { sha: 'abc' } });
      await expectCode(store.tasks.advance(b, 'exec_review', 'done'), 'ILLEGAL_TRANSITION');
    });

    it('an expired claim at reviewing is taken over where it stands by the expiring daemon; anything else goes to ready', async () => {
      const p = await project();
      const atReview = await store.tasks.create({ projectId: p.id, title: 'Executed' });
      const midExecute = await store.tasks.create({ projectId: p.id, title: 'Executing' });
      const breakdown = { rankU: 3, chainInertia: 0.5, agingBonus: 1, couplingPenalty: 0 };
      const a = { id: atReview.id, owner: 'A', attempt: (await store.tasks.claim(atReview.id, 'A', MINUTE, { score: 4.5, breakdown, competitors: [{ taskId: midExecute.id, score: 1 }] })).attempt };
      const m = { id: midExecute.id, owner: 'A', attempt: (await store.tasks.claim(midExecute.id, 'A', MINUTE)).attempt };
      expect(await store.tasks.advance(a, 'queued', 'executing')).toBe(true);
      expect(await store.tasks.advance(a, 'executing', 'reviewing', { result: { kind: 'execute', commitSha: 'c0ffee' } })).toBe(true);
      expect(await store.tasks.advance(m, 'queued', 'executing')).toBe(true);
      const review = await store.runs.start({ taskId: atReview.id, kind: 'review', model: null, traceId: 'tr', attempt: a.attempt, owner: 'A' });
      const claimedAt = now;
      now += MINUTE + 1;
      expect((await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE })).sort()).toEqual([atReview.id, midExecute.id].sort());
      expect(await store.tasks.get(atReview.id)).toMatchObject({ status: 'reviewing', claimedBy: 'B', attempt: a.attempt + 1, leaseExpiresAt: now + MINUTE, result: { commitSha: 'c0ffee' } });
      expect(await store.tasks.get(midExecute.id)).toMatchObject({ status: 'ready', claimedBy: null, lastRunError: 'lease expired: the claimer stopped heartbeating' });
      // A's review run ended with the claim; A is fenced out, B goes on under its own attempt.
      expect(await store.runs.get(review.id)).toMatchObject({ status: 'failed', error: 'its daemon lost the lease on the task' });
      expect(await store.tasks.advance(a, 'reviewing', 'exec_review')).toBe(false);
      expect(await store.tasks.heartbeat(a, MINUTE)).toBe(false);
      expect(await store.tasks.advance({ id: atReview.id, owner: 'B', attempt: a.attempt + 1 }, 'reviewing', 'exec_review')).toBe(true);
      const over = (await store.events.list({ taskId: atReview.id, type: 'task.taken_over' })).events;
      expect(over.map((e) => e.payload)).toEqual([{ owner: 'B', previousOwner: 'A', attempt: a.attempt + 1, status: 'reviewing', reason: 'the lease of A ended with the task reviewing: B goes on from there, with the work A pushed' }]);
      // The decision log says B holds it now, marked as taken over from A at reviewing, with the score A claimed it
      // with and no competitor beaten; newest first.
      expect((await store.decisions.list({ taskId: atReview.id })).map((x) => [x.owner, x.score, x.breakdown, x.competitors, x.at, x.takenOver])).toEqual([
        ['B', 4.5, breakdown, [], now, { from: 'A', status: 'reviewing' }],
        ['A', 4.5, breakdown, [{ taskId: midExecute.id, score: 1 }], claimedAt, null],
      ]);
      expect(await store.decisions.list({ taskId: midExecute.id })).toEqual([]);
      // Without a taker (a store alone), an expired claim at reviewing goes to ready as before.
      const alone = await store.tasks.create({ projectId: p.id, title: 'Alone' });
      const l = { id: alone.id, owner: 'A', attempt: (await store.tasks.claim(alone.id, 'A', MINUTE)).attempt };
      expect(await store.tasks.advance(l, 'queued', 'executing')).toBe(true);
      expect(await store.tasks.advance(l, 'executing', 'reviewing')).toBe(true);
      now += MINUTE + 1;
      expect(await store.tasks.expireClaims()).toEqual([alone.id]);
      expect(await store.tasks.get(alone.id)).toMatchObject({ status: 'ready', claimedBy: null });
    });

    it('a taker with no slot free leaves a takeover for a lease to a live daemon with one; takes it when none has, or after that lease', async () => {
      const p = await project();
      const settings = (maxConcurrentRuns: number) => ({ version: '0.1.0', node: 'v20', leaseMs: MINUTE, tickMs: 100, maxConcurrentRuns, maxConcurrentRunsPerProject: 4, reservedConflictSlots: 0, warmWorkers: 0, agentSandbox: 'off' as const });
      const join = (name: string, slots: number) => registerDaemon(store.db, { name, host: 'h', pid: 1, home: `/home/${name}`, now, staleMs: 3 * MINUTE, settings: settings(slots) });
      /** Live daemons beat and renew what they hold (A does not: it is the one gone). */
      const alive = async (...names: string[]) => {
        for (const name of names) {
          await beatDaemon(store.db, name, now);
          await store.tasks.renewOwnedLeases(name, MINUTE);
        }
      };
      /** A task at reviewing claimed by A, whose lease ended a moment ago. */
      const atReview = async (title: string) => {
        const t = await store.tasks.create({ projectId: p.id, title });
        const f = { id: t.id, owner: 'A', attempt: (await store.tasks.claim(t.id, 'A', MINUTE)).attempt };
        expect(await store.tasks.advance(f, 'queued', 'executing')).toBe(true);
        expect(await store.tasks.advance(f, 'executing', 'reviewing', { result: { kind: 'execute', commitSha: 'c0ffee' } })).toBe(true);
        return t;
      };
      const first = await atReview('Left to C');
      // C has one slot and nothing running: room. B is busy.
      await join('B', 1);
      await join('C', 1);
      now += MINUTE + 1;
      await alive('B', 'C');
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE, busy: true })).toEqual([]);
      expect(await store.tasks.get(first.id)).toMatchObject({ status: 'reviewing', claimedBy: 'A' });
      // C's own expiry takes it over, and C now holds one task waiting for its one slot: no room left there.
      expect(await store.tasks.expireClaims({ owner: 'C', leaseMs: MINUTE })).toEqual([first.id]);
      expect(await store.tasks.get(first.id)).toMatchObject({ status: 'reviewing', claimedBy: 'C' });
      const second = await atReview('No room elsewhere');
      now += MINUTE + 1;
      await alive('B', 'C');
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE, busy: true })).toEqual([second.id]);
      expect(await store.tasks.get(second.id)).toMatchObject({ claimedBy: 'B' });
      // A daemon with room that does not take it (gone quiet since, or unable to): after a lease the busy one does.
      const third = await atReview('Left, then taken');
      await join('D', 2);
      now += MINUTE + 1;
      await alive('B', 'C', 'D');
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE, busy: true })).toEqual([]);
      now += MINUTE;
      await alive('B', 'C', 'D');
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE, busy: true })).toEqual([third.id]);
      // A taker with room takes at once, as before.
      const fourth = await atReview('Taken at once');
      now += MINUTE + 1;
      await alive('B', 'C', 'D');
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE })).toEqual([fourth.id]);
    });

    it("a daemon's own expired claims are renewed by its expiry, not taken over or sent to ready: same attempt, its runs go on", async () => {
      const p = await project();
      const atReview = await store.tasks.create({ projectId: p.id, title: 'Reviewing' });
      const midExecute = await store.tasks.create({ projectId: p.id, title: 'Executing' });
      const a = { id: atReview.id, owner: 'A', attempt: (await store.tasks.claim(atReview.id, 'A', MINUTE)).attempt };
      const m = { id: midExecute.id, owner: 'A', attempt: (await store.tasks.claim(midExecute.id, 'A', MINUTE)).attempt };
      expect(await store.tasks.advance(a, 'queued', 'executing')).toBe(true);
      expect(await store.tasks.advance(a, 'executing', 'reviewing', { result: { kind: 'execute', commitSha: 'c0ffee' } })).toBe(true);
      expect(await store.tasks.advance(m, 'queued', 'executing')).toBe(true);
      const review = await store.runs.start({ taskId: atReview.id, kind: 'review', model: null, traceId: 'tr', attempt: a.attempt, owner: 'A' });
      const execute = await store.runs.start({ taskId: midExecute.id, kind: 'execute', model: null, traceId: 'tr2', attempt: m.attempt, owner: 'A' });
      // A was cut off from the database for longer than a lease: its leases ran out, nobody else looked.
      now += MINUTE + 1;
      expect(await store.tasks.expireClaims({ owner: 'A', leaseMs: MINUTE })).toEqual([]);
      expect(await store.tasks.get(atReview.id)).toMatchObject({ status: 'reviewing', claimedBy: 'A', attempt: a.attempt, leaseExpiresAt: now + MINUTE });
      expect(await store.tasks.get(midExecute.id)).toMatchObject({ status: 'executing', claimedBy: 'A', attempt: m.attempt, leaseExpiresAt: now + MINUTE });
      expect((await store.runs.get(review.id)).status).toBe('running');
      expect((await store.runs.get(execute.id)).status).toBe('running');
      expect((await store.events.list({ taskId: atReview.id, type: 'task.taken_over' })).events).toEqual([]);
      // Each renewal is said, on the running run's trace (the board's trace of that run shows it).
      const renewed = (await store.events.list({ projectId: p.id, type: 'task.renewed' })).events;
      expect(renewed.map((e) => [e.taskId, e.runId, e.traceId, e.payload]).sort((x, y) => String(x[0]).localeCompare(String(y[0])))).toEqual(
        [
          [atReview.id, review.id, 'tr', { owner: 'A', status: 'reviewing', attempt: a.attempt, reason: 'the lease of A ran out while it was cut off from the database, with the task reviewing: A renewed its claim (the same attempt) and goes on with it; its review run goes on (or resumes from its last finished stage)' }],
          [midExecute.id, execute.id, 'tr2', { owner: 'A', status: 'executing', attempt: m.attempt, reason: 'the lease of A ran out while it was cut off from the database, with the task executing: A renewed its claim (the same attempt) and goes on with it; its execute run goes on (or resumes from its last finished stage)' }],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );
      // Its fence holds: the review's result is A's to apply under the same attempt.
      expect(await store.tasks.advance(a, 'reviewing', 'exec_review')).toBe(true);
      // Another daemon expiring at the same time finds nothing due.
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE })).toEqual([]);
      expect(await store.tasks.get(midExecute.id)).toMatchObject({ claimedBy: 'A', attempt: m.attempt });
      // A lease not yet run out is not renewed by the expiry, nor said to be.
      expect(await store.tasks.expireClaims({ owner: 'A', leaseMs: MINUTE })).toEqual([]);
      expect((await store.events.list({ projectId: p.id, type: 'task.renewed' })).events).toHaveLength(2);
    });

    it('a stopping daemon releases the tasks it holds with no run in flight; it renews them if it comes back first', async () => {
      const p = await project();
      const idle = await store.tasks.create({ projectId: p.id, title: 'Between stages' });
      const busy = await store.tasks.create({ projectId: p.id, title: 'Running' });
      const other = await store.tasks.create({ projectId: p.id, title: 'Elsewhere' });
      const i = { id: idle.id, owner: 'A', attempt: (await store.tasks.claim(idle.id, 'A', MINUTE)).attempt };
      const b = { id: busy.id, owner: 'A', attempt: (await store.tasks.claim(busy.id, 'A', MINUTE)).attempt };
      await store.tasks.claim(other.id, 'C', MINUTE);
      for (const [f, to] of [[i, 'executing'], [b, 'executing']] as const) expect(await store.tasks.advance(f, 'queued', to)).toBe(true);
      expect(await store.tasks.advance(i, 'executing', 'reviewing', { result: { commitSha: 'c0ffee' } })).toBe(true);
      await store.runs.start({ taskId: busy.id, kind: 'execute', model: null, traceId: 'tr', attempt: b.attempt, owner: 'A' });
      now += 1000;
      expect(await store.tasks.releaseIdleClaims('A')).toEqual([idle.id]);
      expect(await store.tasks.get(idle.id)).toMatchObject({ status: 'reviewing', claimedBy: 'A', leaseExpiresAt: now });
      expect(await store.tasks.get(busy.id)).toMatchObject({ claimedBy: 'A', leaseExpiresAt: now - 1000 + MINUTE });
      expect(await store.tasks.get(other.id)).toMatchObject({ claimedBy: 'C', leaseExpiresAt: now - 1000 + MINUTE });
      expect((await store.events.list({ taskId: idle.id, type: 'task.released' })).events.map((e) => e.payload)).toEqual([
        { owner: 'A', status: 'reviewing', reason: 'A stopped with no run of the task in flight: its lease ends now' },
      ]);
      // Once: a second stop finds nothing more to release.
      expect(await store.tasks.releaseIdleClaims('A')).toEqual([]);
      // A back before anyone looked: its claim is renewed, nothing is taken.
      expect(await store.tasks.renewOwnedLeases('A', MINUTE)).toBe(2);
      now += 1;
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE })).toEqual([]);
      expect(await store.tasks.get(idle.id)).toMatchObject({ status: 'reviewing', claimedBy: 'A', attempt: i.attempt });
      // Released again and not renewed: the next daemon's expiry takes it over at once.
      now += 1;
      expect(await store.tasks.releaseIdleClaims('A')).toEqual([idle.id]);
      now += 1;
      expect(await store.tasks.expireClaims({ owner: 'B', leaseMs: MINUTE })).toEqual([idle.id]);
      expect(await store.tasks.get(idle.id)).toMatchObject({ status: 'reviewing', claimedBy: 'B', attempt: i.attempt + 1 });
    });

    it('approves a gate and moves on; the wrong gate is refused', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Gate' });
      for (const s of ['queued', 'planning', 'plan_review'] as const) await store.tasks.transition(t.id, s);
      await expectCode(store.tasks.approve(t.id, 'exec_review', 'ann'), 'WRONG_GATE', /not waiting at exec_review/);
      const approved = await store.tasks.approve(t.id, 'plan_review', 'ann', 'looks right');
      expect(approved).toMatchObject({ status: 'ready', claimedAt: null });
      expect(approved.approvals).toMatchObject([{ gate: 'plan_review', decision: 'approve', who: 'ann', reason: 'looks right', at: now }]);
      // The row alone (what the daemon reads to decide): the same task, its approvals not read.
      expect(await store.tasks.row(t.id)).toEqual({ ...approved, approvals: [] });
      await expectCode(store.tasks.row('t_missing'), 'UNKNOWN_TASK', /t_missing/);
    });

    it('a rejection creates the next version carrying the feedback, and repoints dependents', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Versioned', ownedFiles: ['a.ts'], plan: 'the plan' });
      const dependent = await store.tasks.create({ projectId: p.id, title: 'After', deps: [t.id] });
      for (const s of ['queued', 'executing', 'exec_review'] as const) await store.tasks.transition(t.id, s);
      await expectCode(store.tasks.reject(t.id, 'exec_review', 'bob', '  '), 'BAD_INPUT', /reason/);
      const { old, next } = await store.tasks.reject(t.id, 'exec_review', 'bob', 'missing tests');
      expect(old).toMatchObject({ status: 'superseded', version: 1 });
      expect(old.approvals).toMatchObject([{ gate: 'exec_review', decision: 'reject', reason: 'missing tests', who: 'bob' }]);
      expect(next).toMatchObject({ status: 'ready', version: 2, parentVersionId: t.id, title: 'Versioned', ownedFiles: ['a.ts'], plan: 'the plan', approvals: [] });
      expect(next.feedback).toContain('missing tests');
      expect((await store.tasks.get(dependent.id)).deps).toEqual([next.id]);
      await expectCode(store.tasks.transition(old.id, 'ready'), 'ILLEGAL_TRANSITION', /superseded is final/);
    });

    it('records runs with usage; a run ends once', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Run' });
      const r = await store.runs.create({ taskId: t.id, kind: 'execute', model: 'sonnet', traceId: 'trace-1', attempt: 1 });
      now += 1500;
      const done = await store.runs.finish({ id: r.id, status: 'succeeded', inputTokens: 100, outputTokens: 40, costUsd: 0.25 });
      expect(done).toMatchObject({ status: 'succeeded', endedAt: now, inputTokens: 100, outputTokens: 40, costUsd: 0.25, traceId: 'trace-1' });
      await expectCode(store.runs.finish({ id: r.id, status: 'failed' }), 'ILLEGAL_TRANSITION', /already ended as succeeded/);
      expect(await store.runs.get(r.id)).toEqual(done);
      expect(await store.runs.list({ traceId: 'trace-1' })).toEqual([done]);
      // The model is known at the end (the worker reports the models its calls used); absent, the first one stays.
      const r2 = await store.runs.create({ taskId: t.id, kind: 'review', model: null, traceId: 'trace-2', attempt: 1 });
      expect((await store.runs.finish({ id: r2.id, status: 'succeeded', model: 'opus-x, sonnet-y' })).model).toBe('opus-x, sonnet-y');
      await expectCode(store.runs.create({ taskId: 't_missing', kind: 'plan', model: null, traceId: 'x', attempt: 0 }), 'UNKNOWN_TASK');
      await expectCode(store.runs.get('r_missing'), 'UNKNOWN_RUN');
    });

    it('pages events in order and refuses to rewrite them', async () => {
      const p = await project();
      for (let i = 0; i < 5; i++) await store.events.append({ projectId: p.id, traceId: 'tr', type: 'note', payload: { i } });
      const first = await store.events.list({ projectId: p.id, type: 'note', limit: 2 });
      expect(first.events.map((e) => e.payload.i)).toEqual([0, 1]);
      const second = await store.events.list({ projectId: p.id, type: 'note', limit: 2, after: first.nextAfter! });
      expect(second.events.map((e) => e.payload.i)).toEqual([2, 3]);
      const last = await store.events.list({ projectId: p.id, type: 'note', limit: 2, after: second.nextAfter! });
      expect(last.events.map((e) => e.payload.i)).toEqual([4]);
      expect(last.nextAfter).toBeNull();
      // Newest first (what a screen shows: the last changes, however many came before), paged back with `before`.
      const newest = await store.events.list({ projectId: p.id, type: 'note', limit: 2, order: 'newest' });
      expect(newest.events.map((e) => e.payload.i)).toEqual([4, 3]);
      expect(newest.nextAfter).toBeNull();
      const older = await store.events.list({ projectId: p.id, type: 'note', limit: 2, order: 'newest', before: newest.nextBefore! });
      expect(older.events.map((e) => e.payload.i)).toEqual([2, 1]);
      const oldest = await store.events.list({ projectId: p.id, type: 'note', limit: 2, order: 'newest', before: older.nextBefore! });
      expect(oldest.events.map((e) => e.payload.i)).toEqual([0]);
      expect(oldest.nextBefore).toBeNull();
      // Both bounds: the events between two ids.
      const between = await store.events.list({ projectId: p.id, type: 'note', after: first.events[0]!.id, before: last.events[0]!.id });
      expect(between.events.map((e) => e.payload.i)).toEqual([1, 2, 3]);
      expect(between.nextBefore).toBeNull();
      await expect(db.run(`UPDATE events SET type = 'forged'`)).rejects.toThrow(/append-only/);
      await expect(db.run(`DELETE FROM events`)).rejects.toThrow(/append-only/);
      expect((await store.events.list({ traceId: 'tr' })).events).toHaveLength(5);
    });

    it('reports tasks by status, run durations, tokens and cost', async () => {
      const p = await project();
      const t1 = await store.tasks.create({ projectId: p.id, title: 'one' });
      await store.tasks.create({ projectId: p.id, title: 'two' });
      await store.tasks.transition(t1.id, 'cancelled');
      for (const [ms, tokens] of [[1000, 10], [3000, 30]] as const) {
        const r = await store.runs.create({ taskId: t1.id, kind: 'execute', model: 'm', traceId: 'x', attempt: 1 });
        now += ms;
        await store.runs.finish({ id: r.id, status: 'succeeded', inputTokens: tokens, outputTokens: 1, costUsd: 0.5 });
      }
      expect(await store.metrics.tasksByStatus(p.id)).toEqual({ cancelled: 1, ready: 1 });
      expect(await store.metrics.runDurations(p.id)).toEqual([{ kind: 'execute', count: 2, meanMs: 2000, p50Ms: 3000, p95Ms: 3000, maxMs: 3000 }]);
      expect(await store.metrics.usageByProject()).toEqual([{ projectId: p.id, runs: 2, inputTokens: 40, outputTokens: 2, costUsd: 1 }]);
    });

    it('appends an event once per dedupe key, whatever the number of ingestions', async () => {
      const p = await project();
      const first = await store.events.appendOnce({ projectId: p.id, type: 'run.phase', payload: { phase: 'plan' } }, 'r1:0');
      const again = await store.events.appendOnce({ projectId: p.id, type: 'run.phase', payload: { phase: 'plan' } }, 'r1:0');
      expect(first?.payload).toEqual({ phase: 'plan' });
      expect(again).toBeNull();
      expect((await store.events.list({ projectId: p.id, type: 'run.phase' })).events).toHaveLength(1);
    });

    it('records scheduler decisions with their breakdown and competitors, newest first', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'won' });
      const breakdown = { rankU: 5, chainInertia: 1, agingBonus: 0.25, couplingPenalty: 0.5 };
      await store.decisions.record({ projectId: p.id, taskId: t.id, owner: 'd1', score: 5.75, breakdown, competitors: [{ taskId: 't_x', score: 2 }] });
      now += 1;
      await store.decisions.record({ projectId: p.id, taskId: t.id, owner: 'd1', score: 6, breakdown, competitors: [] });
      const list = await store.decisions.list({ taskId: t.id });
      expect(list.map((d) => d.score)).toEqual([6, 5.75]);
      expect(list[1]).toMatchObject({ owner: 'd1', breakdown, competitors: [{ taskId: 't_x', score: 2 }] });
    });

    it('lists approvals per task', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'gate' });
      for (const s of ['queued', 'planning', 'plan_review'] as const) await store.tasks.transition(t.id, s);
      await store.tasks.approve(t.id, 'plan_review', 'ann');
      expect(await store.approvals.list({ taskId: t.id })).toMatchObject([{ gate: 'plan_review', decision: 'approve', who: 'ann' }]);
    });

    it("says of an exec_review approval whether it approved the task's change or a conflict run's resolution", async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'conflicted' });
      for (const s of ['queued', 'executing'] as const) await store.tasks.transition(t.id, s);
      await store.runs.start({ taskId: t.id, kind: 'execute', model: null, traceId: 'tr', attempt: 0 });
      now += 1;
      for (const s of ['reviewing', 'exec_review'] as const) await store.tasks.transition(t.id, s);
      const first = await store.tasks.approve(t.id, 'exec_review', 'auto-approve', 'approved without a person');
      expect(first.approvals.map((a) => a.conflictResolution)).toEqual([false]);
      // The merge conflicted: a conflict run resolved it, and the resolution came back to the gate.
      now += 1;
      await store.tasks.transition(t.id, 'executing');
      await store.runs.start({ taskId: t.id, kind: 'conflict', model: null, traceId: 'tr', attempt: 0 });
      await store.runs.start({ taskId: t.id, kind: 'review', model: null, traceId: 'tr', attempt: 0 });
      now += 1;
      for (const s of ['reviewing', 'exec_review'] as const) await store.tasks.transition(t.id, s);
      const second = await store.tasks.approve(t.id, 'exec_review', 'auto-approve', 'approved without a person');
      expect(second.approvals.map((a) => [a.reason, a.conflictResolution])).toEqual([['approved without a person', false], ['approved without a person', true]]);
      expect((await store.approvals.list({ taskId: t.id })).map((a) => a.conflictResolution)).toEqual([false, true]);
      expect((await store.tasks.get(t.id)).approvals).toEqual(second.approvals);
    });

    it('names the decomposed parents whose subtasks are all over, in one read, and no other', async () => {
      const p = await project();
      const subtasks = ['One', 'Two'].map((title) => ({ title, complexity: 'easy', priority: 1, deps: [], ownedFiles: [], expectedOutput: null }));
      const decomposed = async (title: string) => {
        const t = await store.tasks.create({ projectId: p.id, title });
        for (const s of ['queued', 'planning'] as const) await store.tasks.transition(t.id, s);
        await store.tasks.transition(t.id, 'plan_review', { fields: { plan: 'Two steps.', result: { kind: 'plan', subtasks } } });
        await store.tasks.approve(t.id, 'plan_review', 'ann');
        return { id: t.id, kids: await store.tasks.list({ parentId: t.id }) };
      };
      const [settled, cancelledOne, busy] = [await decomposed('Settled'), await decomposed('Cancelled one'), await decomposed('Busy')];
      expect(await store.tasks.settledParents()).toEqual([]);
      const done = async (id: string) => {
        for (const s of ['queued', 'executing', 'reviewing', 'merging', 'done'] as const) await store.tasks.transition(id, s);
      };
      for (const k of settled.kids) await done(k.id);
      await done(cancelledOne.kids[0]!.id);
      await store.tasks.cancel(cancelledOne.kids[1]!.id, { reason: 'not needed' });
      await done(busy.kids[0]!.id);
      await store.tasks.transition(busy.kids[1]!.id, 'queued');
      // Created in the same millisecond (this clock): in id order then.
      expect(await store.tasks.settledParents()).toEqual([settled.id, cancelledOne.id].sort());
      // One no longer waiting is not named, whatever its subtasks.
      await store.tasks.transition(settled.id, 'done');
      expect(await store.tasks.settledParents()).toEqual([cancelledOne.id]);
    });

    it('reports malformed JSON in a stored column with table, column and row', async () => {
      const p = await project();
      const t = await store.tasks.create({ projectId: p.id, title: 'Corrupt' });
      await db.run(`UPDATE tasks SET deps = $1 WHERE id = $2`, ['[not json', t.id]);
      await expectCode(store.tasks.get(t.id), 'CORRUPT_COLUMN', new RegExp(`tasks\\.deps of ${t.id} is not valid JSON`));
      await db.run(`UPDATE tasks SET deps = $1 WHERE id = $2`, ['{"a":1}', t.id]);
      await expectCode(store.tasks.get(t.id), 'CORRUPT_COLUMN', /wrong shape/);
    });
  });
}
