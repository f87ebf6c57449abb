import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/store/postgres.js';
import { freshPostgres, pgAvailable } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { defineStoreContract } from './contract.js';

// Skips only on a developer machine without PostgreSQL, and says so; globalSetup fails CI instead.
if (!pgAvailable()) process.stderr.write(PG_MISSING);
defineStoreContract('PostgreSQL', freshPostgres, !pgAvailable());

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
});
