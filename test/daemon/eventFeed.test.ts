/**
 * The event feed on PostgreSQL: an event whose transaction commits after a
 * later id was already read (two daemons writing at once) is still published,
 * once. (The store's NOTIFY after commit, never for a rollback: test/store/pgNotify.test.ts.)
 * And (SQLite) the events a transaction of this process appends are published
 * as it commits, once, without holding back events other processes wrote.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { MaestroEvent } from '../../src/core/types.js';
import { Bus } from '../../src/lib/bus.js';
import { EventFeed } from '../../src/daemon/eventFeed.js';
import { createStore, type Store } from '../../src/store/store.js';
import { openSqlite } from '../../src/store/sqlite.js';
import { freshPostgres, freshSqlite, pgAvailable, removeTempDirs } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const insert = (c: pg.Client, type: string) => c.query(`INSERT INTO events (type, payload, at) VALUES ($1, '{}', 0) RETURNING id`, [type]).then((r) => Number(r.rows[0].id));

describe.skipIf(!pgAvailable())('event feed on PostgreSQL', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
    removeTempDirs();
  });

  async function setup(): Promise<{ store: Store; url: string; feed: EventFeed; seen: MaestroEvent[]; client: () => Promise<pg.Client> }> {
    const { db, url } = await freshPostgres();
    const store = createStore(db);
    cleanups.push(() => store.close());
    const bus = new Bus();
    const seen: MaestroEvent[] = [];
    bus.onEvent((e) => seen.push(e));
    const errors: Error[] = [];
    const feed = new EventFeed(store, bus, { pollMs: 600_000, gapMs: 30_000, onError: (e) => errors.push(e) });
    await feed.start();
    cleanups.push(async () => {
      await feed.stop();
      expect(errors).toEqual([]);
    });
    const client = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      cleanups.push(() => c.end());
      return c;
    };
    return { store, url, feed, seen, client };
  }

  it('publishes an event committed after a later one was read, exactly once', async () => {
    const { feed, seen, client } = await setup();
    const slow = await client();
    const fast = await client();
    await slow.query('BEGIN');
    const early = await insert(slow, 'slow');
    const late = await insert(fast, 'fast'); // autocommit: visible first
    expect(late).toBeGreaterThan(early);
    await feed.poke();
    expect(seen.map((e) => e.type)).toEqual(['fast']);
    await slow.query('COMMIT');
    await feed.poke();
    await feed.poke();
    expect(seen.map((e) => [e.type, e.id])).toEqual([['fast', late], ['slow', early]]);
  });
});

describe('event feed: events this process commits', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
    removeTempDirs();
  });

  it('publishes them as the transaction commits, before any read, and once; events written elsewhere still arrive in between', async () => {
    const { db, path } = await freshSqlite();
    const store = createStore(db);
    cleanups.push(() => store.close());
    // Another process on the same file (the CLI, say): its writes are not this store's.
    const other = createStore(openSqlite(path));
    cleanups.push(() => other.close());
    const bus = new Bus();
    const seen: MaestroEvent[] = [];
    bus.onEvent((e) => seen.push(e));
    const feed = new EventFeed(store, bus, { pollMs: 600_000, gapMs: 0, onError: (e) => expect.fail(e.message) });
    await feed.start();
    cleanups.push(() => feed.stop());
    // As the daemon wires it (src/daemon/daemon.ts), but without the read after each write.
    store.onWrite((events) => feed.publishDirect(events));

    const project = await store.projects.create({ name: 'feed', repoPath: '/r' });
    const task = await store.tasks.create({ projectId: project.id, title: 'a' });
    // Published on commit, with no read of the event log (the poll is 10 minutes away).
    expect(seen.map((e) => e.type)).toEqual(['project.created', 'task.created']);
    await other.events.append({ projectId: project.id, type: 'note', payload: {} });
    await store.tasks.transition(task.id, 'cancelled', { from: 'ready' });
    expect(seen.map((e) => [e.type, e.payload.to])).toEqual([['project.created', undefined], ['task.created', undefined], ['task.status', 'cancelled']]);
    // The read meets all four in id order: it publishes the other process's event and skips the three already out.
    await feed.poke();
    expect(seen.map((e) => e.type)).toEqual(['project.created', 'task.created', 'task.status', 'note']);
    await feed.poke();
    expect(seen).toHaveLength(4);
    // After a write of this process (as the orchestrator and the API say): with no NOTIFY on SQLite, the feed
    // reads, and another process's event arrives without waiting for the poll.
    await other.events.append({ projectId: project.id, type: 'note', payload: { n: 2 } });
    await feed.wrote();
    expect(seen.map((e) => e.type)).toEqual(['project.created', 'task.created', 'task.status', 'note', 'note']);
  });
});
