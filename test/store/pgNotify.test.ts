/**
 * NOTIFY maestro_events on PostgreSQL, sent by the store after commit rather
 * than by a trigger inside the writing transaction (migration 006,
 * src/store/pgNotifier.ts): another store's feed hears of committed events by
 * LISTEN alone, and a store's own feed reads nothing for its own (their events
 * were published at commit), nor after its own writes while it listens; a rolled-back transaction announces nothing; a burst of claims
 * is announced by a few notifications, not one per claim, and the trigger that
 * made every claim take PostgreSQL's notify lock is gone.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { MaestroEvent } from '../../src/core/types.js';
import { EventFeed } from '../../src/daemon/eventFeed.js';
import { Bus } from '../../src/lib/bus.js';
import type { DBAdapter } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { notify } from '../../src/store/migrations/004_notify.js';
import { PgListener } from '../../src/store/pgListener.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshPostgres, pgAvailable } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { poll } from '../helpers/wait.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

describe.skipIf(!pgAvailable())('NOTIFY maestro_events after commit (PostgreSQL)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  const closing = <T extends { close: () => Promise<unknown> }>(x: T): T => (cleanups.push(() => x.close()), x);

  /** A plain connection that LISTENs on maestro_events and records each payload it hears. */
  async function listen(url: string): Promise<{ client: pg.Client; heard: string[] }> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    const heard: string[] = [];
    client.on('notification', (m) => heard.push(m.payload ?? ''));
    await client.query('LISTEN maestro_events');
    // A new listener can still be handed notifications committed just before its LISTEN (PostgreSQL
    // starts it at the slowest listener's place in the queue): drop everything up to a first marker.
    await client.query(`NOTIFY maestro_events, 'listening'`);
    await poll(() => heard.includes('listening'), 'the first marker notification', 30_000);
    heard.splice(0);
    return { client, heard };
  }

  /** Waits for a marker sent after everything else: notifications arrive in commit order, so what came before it is all there is. */
  async function heardUpToMarker(l: { client: pg.Client; heard: string[] }): Promise<string[]> {
    await l.client.query(`NOTIFY maestro_events, 'marker'`);
    await poll(() => l.heard.includes('marker'), 'the marker notification', 30_000);
    return l.heard.slice(0, l.heard.indexOf('marker'));
  }

  /** A project with `n` ready tasks, written by a store that is closed again (its notifications sent) before the test listens. */
  async function seeded(url: string, n: number): Promise<{ projectId: string; taskIds: string[] }> {
    const setup = createStore(openPostgres(url));
    try {
      const project = await setup.projects.create({ name: 'notify', repoPath: '/r' });
      const taskIds: string[] = [];
      for (let i = 0; i < n; i++) taskIds.push((await setup.tasks.create({ projectId: project.id, title: `t${i}` })).id);
      return { projectId: project.id, taskIds };
    } finally {
      await setup.close();
    }
  }

  it("a second store's event feed hears of each committed event through LISTEN, with its poll ten minutes away", async () => {
    const { db, url } = await freshPostgres();
    const writer = closing(createStore(db));
    const reader: Store = closing(createStore(openPostgres(url)));
    const bus = new Bus();
    const seen: MaestroEvent[] = [];
    bus.onEvent((e) => seen.push(e));
    const errors: Error[] = [];
    const feed = new EventFeed(reader, bus, { pollMs: 600_000, listeningPollMs: 600_000, gapMs: 30_000, onError: (e) => errors.push(e) });
    await feed.start();
    cleanups.push(() => feed.stop());
    const listener = new PgListener(url, ['maestro_events'], { onNotify: (_channel, payload) => feed.notified(payload), onState: (up) => feed.setListening(up) });
    await listener.start();
    cleanups.push(() => listener.stop());
    expect(listener.listening).toBe(true);
    // setListening(true) read the log once; from here on only a notification makes the feed read.

    const project = await writer.projects.create({ name: 'feed', repoPath: '/r' });
    const task = await writer.tasks.create({ projectId: project.id, title: 'watched' });
    await poll(() => seen.some((e) => e.type === 'task.created' && e.taskId === task.id), "the reader's feed publishing task.created", 30_000);
    // A claim: one statement with no BEGIN/COMMIT around it (claimBestPg), announced the same way.
    const [claimed] = await writer.tasks.claimBest({ ranked: [{ id: task.id, projectId: project.id }], owner: 'w', leaseMs: 60_000, max: 1 });
    expect(claimed?.id).toBe(task.id);
    const queued = () => seen.find((e) => e.type === 'task.status' && e.taskId === task.id && e.payload.to === 'queued');
    await poll(queued, "the reader's feed publishing the claim's ready → queued", 30_000);
    const logged = (await writer.events.list({ taskId: task.id })).events;
    expect(seen.filter((e) => e.taskId === task.id).map((e) => e.id)).toEqual(logged.map((e) => e.id));
    expect(errors).toEqual([]);
  });

  it("a store's own feed reads the log for other stores' notifications, not for its own: its events were published as they committed", async () => {
    const { db, url } = await freshPostgres();
    const writer = closing(createStore(db));
    const other = closing(createStore(openPostgres(url)));
    const bus = new Bus();
    const seen: MaestroEvent[] = [];
    bus.onEvent((e) => seen.push(e));
    const errors: Error[] = [];
    // Wired as the daemon wires it (src/app/daemon.ts), its poll ten minutes away.
    const feed = new EventFeed(writer, bus, { pollMs: 600_000, listeningPollMs: 600_000, gapMs: 30_000, origin: writer.db.notifyOrigin, onError: (e) => errors.push(e) });
    await feed.start();
    cleanups.push(() => feed.stop());
    writer.onWrite((events) => feed.publishDirect(events));
    const heard: string[] = [];
    const listener = new PgListener(url, ['maestro_events'], {
      onNotify: (_channel, payload) => {
        heard.push(payload);
        feed.notified(payload);
      },
      onState: (up) => feed.setListening(up),
    });
    await listener.start();
    cleanups.push(() => listener.stop());
    await feed.poke(); // the read setListening(true) started is over
    let reads = 0;
    const list = writer.events.list;
    writer.events.list = (filter) => (reads++, list(filter));

    const project = await writer.projects.create({ name: 'own', repoPath: '/r' });
    expect(seen.some((e) => e.type === 'project.created' && e.projectId === project.id)).toBe(true); // at its commit
    await poll(() => heard.includes(writer.db.notifyOrigin!), "the writer's own notification", 30_000);
    expect(reads).toBe(0);
    // What the orchestrator and the API say after their writes: with the listener up, there is nothing to read.
    await feed.wrote();
    expect(reads).toBe(0);

    const task = await other.tasks.create({ projectId: project.id, title: 'from elsewhere' });
    await poll(() => seen.some((e) => e.type === 'task.created' && e.taskId === task.id), "the other store's task.created", 30_000);
    expect(reads).toBeGreaterThan(0);
    const logged = (await writer.events.list({ limit: 1000 })).events.map((e) => e.id);
    expect(seen.map((e) => e.id)).toEqual(logged); // each once
    expect(errors).toEqual([]);
  });

  it('a transaction that rolls back after inserting its event sends no notification; the next commit sends one', async () => {
    const { db, url } = await freshPostgres();
    const { taskIds } = await seeded(url, 1);
    const taskId = taskIds[0]!;
    let asked = 0;
    closing(db);
    const counted: DBAdapter = { ...db, notifyEvents: () => (asked++, db.notifyEvents!()) };
    // The crash suites' seam: refusing at the commit point rolls back a real status change after its event was inserted.
    let refuse = true;
    const store = createStore(counted, Date.now, {
      faults: {
        point: (at) => {
          if (refuse && at === 'tasks.transition#commit') throw new Error('refused at commit');
        },
      },
    });
    const l = await listen(url);
    const eventsBefore = (await store.events.list({ taskId })).events.length;

    await expect(store.tasks.transition(taskId, 'cancelled', { from: 'ready' })).rejects.toThrow('refused at commit');
    expect((await store.tasks.get(taskId)).status).toBe('ready');
    expect((await store.events.list({ taskId })).events).toHaveLength(eventsBefore);
    expect(asked).toBe(0);

    refuse = false;
    await store.tasks.transition(taskId, 'cancelled', { from: 'ready' });
    expect(asked).toBe(1);
    await store.close(); // every notification it asked for has been sent
    // Named by its sender: that process's own listener reads nothing for it (src/app/daemon.ts).
    expect(await heardUpToMarker(l)).toEqual([db.notifyOrigin]);
  });

  it('a burst of claim transactions is announced by one notification, and one more after the last claim; the trigger is gone', async () => {
    const { db: plain, url } = await freshPostgres();
    expect(await plain.all(`SELECT tgname FROM pg_trigger WHERE tgname = 'events_notify'`)).toEqual([]);
    expect(await plain.all(`SELECT proname FROM pg_proc WHERE proname = 'events_notify'`)).toEqual([]);
    await plain.close();
    const n = 30;
    const { projectId, taskIds } = await seeded(url, n);
    const l = await listen(url);
    // A gap of ten minutes: after the first send, only close() lets the pending one out.
    const store = createStore(openPostgres(url, { notifyGapMs: 600_000 }));
    let closed = false;
    cleanups.push(async () => closed || store.close());
    const ranked = taskIds.map((id) => ({ id, projectId }));
    for (let i = 0; i < n; i++) {
      const got = await store.tasks.claimBest({ ranked, owner: 'burst', leaseMs: 60_000, max: 1 });
      expect(got).toHaveLength(1);
    }
    await poll(() => l.heard.length >= 1, 'the first claim announced', 30_000);
    await l.client.query('SELECT 1'); // delivers anything already sent to this connection
    const origin = store.db.notifyOrigin;
    expect(origin).toMatch(/^[0-9a-f-]{36}$/);
    expect(l.heard).toEqual([origin]);
    await store.close();
    closed = true;
    expect(await heardUpToMarker(l)).toEqual([origin, origin]);
  });

  it('migrating a database that has the trigger (schema 5) drops it: an insert of events then notifies nobody by itself', async () => {
    const { db, url } = await freshPostgres();
    closing(db);
    for (const sql of notify.postgres!) await db.run(sql);
    await db.run(`ALTER TABLE projects DROP COLUMN archived_at`);
    await db.run(`ALTER TABLE projects DROP COLUMN auto_approve_from`);
    await db.run(`ALTER TABLE tasks DROP COLUMN feedback_source`);
    await db.run(`DROP INDEX tasks_parent_version`);
    await db.run(`ALTER TABLE daemons DROP COLUMN settings`);
    await db.run(`DROP TABLE run_knowledge`);
    await db.run(`DELETE FROM schema_migrations WHERE version >= 6`);
    const insert = () => db.run(`INSERT INTO events (type, payload, at) VALUES ('raw', '{}', 0)`);
    const before = await listen(url);
    await insert();
    expect(await heardUpToMarker(before)).toEqual(['']);
    expect((await migrate(db)).applied).toEqual([6, 7, 8, 9, 10, 11, 12]);
    expect(await db.all(`SELECT tgname FROM pg_trigger WHERE tgname = 'events_notify'`)).toEqual([]);
    expect(await db.all(`SELECT proname FROM pg_proc WHERE proname = 'events_notify'`)).toEqual([]);
    const after = await listen(url);
    await insert();
    expect(await heardUpToMarker(after)).toEqual([]);
  });
});
