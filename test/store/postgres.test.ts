import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/store/postgres.js';
import { startRun } from '../../src/store/ops/runs.js';
import { createStore } from '../../src/store/store.js';
import { poll } from '../helpers/wait.js';
import { freshPostgres, pgAvailable } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { defineStoreContract } from './contract.js';
import { defineArchiveContract } from './contractArchive.js';
import { defineAutoApprovalContract } from './contractAutoApproval.js';
import { defineVersionDepsContract } from './contractVersionDeps.js';
import { defineRetryPlanContract } from './contractRetryPlan.js';
import { defineMergeCheckLostContract } from './contractMergeCheckLost.js';
import { defineMergeCheckAtWorkContract } from './contractMergeCheckAtWork.js';

// Skips only on a developer machine without PostgreSQL, and says so; globalSetup fails CI instead.
if (!pgAvailable()) process.stderr.write(PG_MISSING);
defineStoreContract('PostgreSQL', freshPostgres, !pgAvailable());
defineArchiveContract('PostgreSQL', freshPostgres, !pgAvailable());
defineAutoApprovalContract('PostgreSQL', freshPostgres, !pgAvailable());
defineVersionDepsContract('PostgreSQL', freshPostgres, !pgAvailable());
defineRetryPlanContract('PostgreSQL', freshPostgres, !pgAvailable());
defineMergeCheckLostContract('PostgreSQL', freshPostgres, !pgAvailable());
defineMergeCheckAtWorkContract('PostgreSQL', freshPostgres, !pgAvailable());

describe.skipIf(!pgAvailable())('PostgreSQL sessions', () => {
  // A daemon cut off from the network in the middle of a transaction: the server must end it, or the
  // rows it locked (a task's) stay locked and the daemon taking its lapsed lease back waits for ever.
  it('a transaction a vanished daemon left open is ended by the server, and the rows it locked are free again', async () => {
    const { db, url } = await freshPostgres();
    const vanished = openPostgres(url, { max: 1, idleInTransactionMs: 500 });
    try {
      await db.run(`CREATE TABLE held (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)`);
      await db.run(`INSERT INTO held (id, v) VALUES (1, 0)`);
      let locked!: () => void;
      const hasLock = new Promise<void>((resolve) => (locked = resolve));
      let wakeUp!: () => void;
      const silence = new Promise<void>((resolve) => (wakeUp = resolve));
      const left = vanished.transaction(async (tx) => {
        await tx.run(`UPDATE held SET v = 1 WHERE id = 1`);
        locked();
        await silence; // nothing more comes from this daemon
        await tx.run(`UPDATE held SET v = 3 WHERE id = 1`);
      });
      const outcome = left.then(() => 'committed', (err: Error) => err.message);
      await hasLock;
      expect(await db.run(`UPDATE held SET v = 2 WHERE id = 1`)).toBe(1);
      wakeUp();
      expect(await outcome).toMatch(/idle-in-transaction|terminat|Connection/i);
      expect(await db.one<{ v: number }>(`SELECT v FROM held WHERE id = 1`)).toEqual({ v: 2 });
    } finally {
      await vanished.close();
      await db.close();
    }
  });

  // A claim is one statement: BEGIN and COMMIT around it were two more round trips per claim for nothing.
  it('a one-statement transaction runs its statement on its own, and refuses a second one', async () => {
    const { db } = await freshPostgres();
    try {
      // Inside BEGIN … COMMIT, now() is the transaction's start, before the statement's own timestamp.
      const alone = await db.transaction((q) => q.one<{ same: boolean }>(`SELECT now() = statement_timestamp() AS same`), 'x', { oneStatement: true });
      expect(alone).toEqual({ same: true });
      const wrapped = await db.transaction((q) => q.one<{ same: boolean }>(`SELECT now() = statement_timestamp() AS same`), 'x');
      expect(wrapped).toEqual({ same: false });
      const two = db.transaction(async (q) => {
        await q.run(`CREATE TABLE t1 (id INTEGER)`);
        await q.run(`CREATE TABLE t2 (id INTEGER)`);
      }, 'x', { oneStatement: true });
      await expect(two).rejects.toThrow(/second statement/);
      expect(await db.all(`SELECT tablename FROM pg_tables WHERE tablename IN ('t1', 't2')`)).toEqual([{ tablename: 't1' }]);
    } finally {
      await db.close();
    }
  });

  // Every run start holds its project's row to its commit (an archive either waits for it or is seen by it). Run
  // starts of one project on several daemons must not queue for that row: only an archive waits.
  it('run starts of one project do not wait for one another; an archive waits for a run start in progress, then sees its task busy', async () => {
    const { db, url } = await freshPostgres();
    // d1's connection, kept open in its transaction longer than the server's usual idle limit (IDLE_IN_TRANSACTION_MS).
    const d1 = openPostgres(url, { max: 1, idleInTransactionMs: 10 * 60_000 });
    let finish: (() => void) | undefined;
    try {
      const store = createStore(db);
      const p = await store.projects.create({ name: 'shared', repoPath: '/r' });
      const [a, b] = [await store.tasks.create({ projectId: p.id, title: 'a' }), await store.tasks.create({ projectId: p.id, title: 'b' })];
      await store.tasks.claim(a.id, 'd1', 60_000);
      await store.tasks.claim(b.id, 'd2', 60_000);
      let started!: () => void;
      const inProgress = new Promise<void>((resolve) => (started = resolve));
      const held = new Promise<void>((resolve) => (finish = resolve));
      const first = d1.transaction(async (tx) => {
        await startRun(tx, { taskId: a.id, kind: 'execute', model: null, traceId: 'ta', attempt: 1, now: Date.now(), owner: 'd1' });
        started();
        await held; // d1's run start, not yet committed
      });
      await inProgress;
      // d2's run start of the same project goes through meanwhile (with a row written per start, it waited here:
      // the lock timeout makes that a failure that says so, not a test that hangs).
      const second = await db.transaction(async (tx) => {
        await tx.run(`SET LOCAL lock_timeout = '20s'`); console.log('SET', await tx.all(`SHOW lock_timeout`));
        return startRun(tx, { taskId: b.id, kind: 'execute', model: null, traceId: 'tb', attempt: 1, now: Date.now(), owner: 'd2' });
      });
      console.log('SECOND', second.status); expect(second.status).toBe('running');
      const archive = store.projects.archive(p.id).then(() => null, (err: Error & { code?: string }) => err);
      await poll(async () => (await db.all(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE projects SET archived_at%'`)).length === 1, 'the archive to wait for the run start');
      finish!();
      await first;
      const refused = await archive;
      expect(refused).toMatchObject({ code: 'PROJECT_BUSY' });
      expect(refused!.message).toContain(a.id);
      expect((await store.projects.get(p.id)).archivedAt).toBeNull();
      expect((await store.runs.list({ status: 'running' })).map((r) => r.taskId).sort()).toEqual([a.id, b.id].sort());
    } finally {
      finish?.(); // a failed expectation leaves d1's transaction open: end it, or closing its pool waits for it
      await d1.close();
      await db.close();
    }
  });

  it('the claim statement is prepared once per connection and its claims land with their events', async () => {
    const { db: fresh, url } = await freshPostgres();
    await fresh.close();
    const db = openPostgres(url, { max: 1 }); // one connection: the one the claim prepared its statement on
    try {
      const store = createStore(db);
      const p = await store.projects.create({ name: 'p', repoPath: '/r' });
      const tasks = [];
      for (let i = 0; i < 3; i++) tasks.push(await store.tasks.create({ projectId: p.id, title: `t${i}` }));
      const ranked = tasks.map((t) => ({ id: t.id, projectId: p.id }));
      expect((await store.tasks.claimBest({ ranked, owner: 'a', leaseMs: 60_000, max: 1 })).map((c) => c.id)).toEqual([tasks[0]!.id]);
      expect((await store.tasks.claimBest({ ranked, owner: 'b', leaseMs: 60_000, max: 5 })).map((c) => c.id)).toEqual([tasks[1]!.id, tasks[2]!.id]);
      expect(await db.all(`SELECT name FROM pg_prepared_statements`)).toEqual([{ name: 'maestro_claim_best' }]);
      const events = await db.all<{ task_id: string; payload: string }>(`SELECT task_id, payload FROM events WHERE type = 'task.status' ORDER BY id`);
      expect(events.map((e) => [e.task_id, JSON.parse(e.payload).owner])).toEqual([[tasks[0]!.id, 'a'], [tasks[1]!.id, 'b'], [tasks[2]!.id, 'b']]);
    } finally {
      await db.close();
    }
  });
});
