/**
 * Bad input for daemons on a shared PostgreSQL: a wrong database URL, a
 * database of an older or newer schema, two daemons with one name, and a
 * shared remote that refuses pushes. Each gives a clear error at start (and
 * the daemon leaves nothing behind: its home can be used again at once) or in
 * the task's events, and no task is lost or run twice.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MaestroError } from '../../src/core/errors.js';
import { currentSchemaVersion } from '../../src/store/migrate.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/migrations/index.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { freePort, PG_MISSING } from '../helpers/postgres.js';
import { bareRemote, git } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

async function startError(p: Promise<unknown>): Promise<MaestroError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(MaestroError);
  return err as MaestroError;
}

if (!pgAvailable()) process.stderr.write(PG_MISSING);

describe.skipIf(!pgAvailable())('bad input on a shared database', () => {
  const open: { stop: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.stop();
    removeTempDirs();
  });
  const keep = <T extends { stop: () => Promise<unknown> }>(x: T): T => (open.push(x), x);
  const storeOf = (url: string): Store => {
    const store = createStore(openDatabase(url));
    keep({ stop: () => store.close() });
    return store;
  };

  it('a wrong database URL: a clear error at start naming the server (never the password), and the home is free again', async () => {
    const home = tempDir('maestro-home-');
    const port = await freePort();
    const nobody = `postgres://maestro:hunter2@127.0.0.1:${port}/maestro`;
    const err = await startError(startTestDaemon({ home, database: nobody }));
    expect(err.code).toBe('DATABASE_UNREACHABLE');
    expect(err.message).toContain(`Cannot reach PostgreSQL at postgres://maestro:***@127.0.0.1:${port}/maestro`);
    expect(err.message).not.toContain('hunter2');
    // A server that is there, with no such database.
    const { url, db } = await freshPostgres();
    await db.close();
    const missing = url.replace(/\/[^/]+$/, '/no_such_db');
    const err2 = await startError(startTestDaemon({ home, database: missing }));
    expect(err2.code).toBe('DATABASE_UNREACHABLE');
    expect(err2.message).toMatch(/database "no_such_db" does not exist/);
  });

  it('a database of a newer schema: refused at start, nothing changed', async () => {
    const { url, db } = await freshPostgres();
    await db.run(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'from the future', 0)`, [LATEST_SCHEMA_VERSION + 1]);
    await db.close();
    const store = storeOf(url);
    const project = await store.projects.create({ name: 'p', repoPath: tempDir(), config: {} });
    const task = await store.tasks.create({ projectId: project.id, title: 'kept', complexity: 'easy' });
    const err = await startError(startTestDaemon({ name: 'old-maestro', database: url }));
    expect(err.code).toBe('SCHEMA_TOO_NEW');
    expect(err.message).toContain(`schema version ${LATEST_SCHEMA_VERSION + 1}, newer than this Maestro knows (${LATEST_SCHEMA_VERSION})`);
    expect(await currentSchemaVersion(store.db)).toBe(LATEST_SCHEMA_VERSION + 1);
    expect(await store.db.all(`SELECT name FROM daemons`)).toEqual([]);
    expect((await store.tasks.get(task.id)).status).toBe('ready');
  });

  it('a database of an older schema: migrated at start, its tasks kept, the stream table installed and no NOTIFY trigger left', async () => {
    const { url, db } = await freshPostgres();
    const store = storeOf(url);
    const project = await store.projects.create({ name: 'p', repoPath: tempDir(), config: {} });
    const task = await store.tasks.create({ projectId: project.id, title: 'kept', complexity: 'easy' });
    // Back to schema 3 (before LISTEN/NOTIFY), as an older Maestro left it, with its task.
    await db.run(`DROP TABLE stream_overflow`);
    await db.run(`DROP INDEX tasks_ready_order`);
    await db.run(`ALTER TABLE projects DROP COLUMN archived_at`);
    await db.run(`ALTER TABLE projects DROP COLUMN auto_approve_from`);
    await db.run(`ALTER TABLE tasks DROP COLUMN feedback_source`);
    await db.run(`DROP INDEX tasks_parent_version`);
    await db.run(`ALTER TABLE daemons DROP COLUMN settings`);
    await db.run(`DROP TABLE run_knowledge`);
    await db.run(`DELETE FROM schema_migrations WHERE version > 3`);
    await db.close();
    expect(await currentSchemaVersion(store.db)).toBe(3);
    const d = keep(await startTestDaemon({ name: 'upgrader', database: url }, { noOrchestrator: true }));
    expect(await currentSchemaVersion(store.db)).toBe(LATEST_SCHEMA_VERSION);
    expect((await store.tasks.get(task.id)).title).toBe('kept');
    // 004 installs the trigger and 006 drops it again: the store announces events after commit (store/pgNotifier.ts).
    expect(await store.db.all(`SELECT tgname FROM pg_trigger WHERE tgname = 'events_notify'`)).toEqual([]);
    expect(await store.db.all(`SELECT COUNT(*)::int AS n FROM stream_overflow`)).toEqual([{ n: 0 }]);
    expect(d.logs.join('')).toContain('listening for other daemons');
  });

  it('no demo project on a shared database: it would live in one daemon\'s home and show on every board', async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const home = tempDir('maestro-home-');
    const d = keep(await startTestDaemon({ home, database: url }, { demo: true, noOrchestrator: true }));
    expect(await d.store.projects.list()).toEqual([]);
    // The same start on SQLite makes one, so the option was in effect.
    const local = keep(await startTestDaemon({}, { demo: true, noOrchestrator: true }));
    expect((await local.store.projects.list()).map((p) => p.name)).toEqual(['demo']);
  });

  it('two daemons with one name: the second is refused at start, claims nothing, and its home is free again', async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const store = storeOf(url);
    const project = await store.projects.create({ name: 'p', repoPath: tempDir(), config: {} });
    await store.tasks.create({ projectId: project.id, title: 'waiting', complexity: 'easy' });
    const first = keep(await startTestDaemon({ name: 'twin', database: url }, { noOrchestrator: true }));
    const home = tempDir('maestro-home-');
    const err = await startError(startTestDaemon({ name: 'twin', database: url, home, tickMs: 50 }));
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toMatch(/Another daemon named "twin" is alive on this database \(host .+, pid \d+, home .+\)/);
    expect(err.message).toContain('--name or MAESTRO_NAME');
    expect(await store.db.all(`SELECT id FROM runs`)).toEqual([]);
    expect(await store.db.all(`SELECT id FROM scheduler_decisions`)).toEqual([]);
    expect((await store.db.all<{ claimed_by: string | null }>(`SELECT claimed_by FROM tasks`)).map((t) => t.claimed_by)).toEqual([null]);
    // Once the first one stops, the name is free, and the same home starts.
    await first.stop();
    open.splice(open.indexOf(first), 1);
    const again = keep(await startTestDaemon({ name: 'twin', database: url, home }, { noOrchestrator: true }));
    expect(again.config.name).toBe('twin');
  });

  it('a remote that refuses pushes: the refusal is in the task\'s events, the merge waits and completes once the remote accepts, and nothing runs twice', { timeout: budget(180_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const root = tempDir('maestro-refuse-');
    const remote = bareRemote(root);
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "pushes are frozen for the release" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const script = join(root, 'script.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - write: { path: "out.txt", content: "work\\n" }\n  - match: { role: reflect }\n    actions: [{ text: fine }]\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    const store = storeOf(url);
    const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const task = await store.tasks.create({ projectId: project.id, title: 'frozen', complexity: 'easy', ownedFiles: ['out.txt'] });
    const d = keep(await startTestDaemon({ name: 'pusher', database: url, tickMs: 100 }));
    const refusals = async () => (await store.events.list({ taskId: task.id, type: 'git.push_failed', limit: 1000 })).events;
    // The merge was tried, refused, and tried again.
    const story = async () => {
      const t = await store.tasks.get(task.id);
      const events = (await store.events.list({ taskId: task.id, limit: 1000 })).events;
      return `logs: ${d.logs.filter((l) => /"level":(40|50)/.test(l)).map((l) => l.slice(0, 300)).join(" ")} task ${t.status} (${t.lastRunError ?? ''}); events: ${events.map((e) => `${e.type} ${JSON.stringify(e.payload).slice(0, 200)}`).join(' | ')}`;
    };
    await until(d.bus, async () => (await refusals()).length >= 3, 'the merge refused and retried', 120_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${await story()}`);
    });
    for (const e of await refusals()) expect(String(e.payload.message)).toContain('pushes are frozen for the release');
    expect((await store.tasks.get(task.id)).status).toBe('merging');
    expect(await store.db.all(`SELECT task_id FROM merges`)).toEqual([]);
    // The remote accepts again: the task is merged, once, without running again.
    rmSync(hook);
    await until(d.bus, async () => (await store.tasks.get(task.id)).status === 'done', 'the task done', 120_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${await story()}`);
    });
    expect(await store.db.all(`SELECT task_id FROM merges`)).toEqual([{ task_id: task.id }]);
    const runs = await store.runs.list({ taskId: task.id });
    expect(runs.filter((r) => r.kind === 'execute')).toHaveLength(1);
    const check = join(root, 'check');
    execFileSync('git', ['clone', '-q', remote, check], { stdio: 'pipe' });
    expect(git(check, 'log', '--format=%H', '--', 'out.txt').split('\n').filter(Boolean)).toHaveLength(1);
  });
});
