/**
 * A daemon whose database another daemon migrated past this build's schema (the team upgraded one of
 * several) stops claiming and says so, instead of writing rows the newer schema means otherwise; its
 * health clears, and claiming resumes, once the schema is one it knows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../src/daemon/health.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/migrations/index.js';
import { removeTempDirs } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

describe('a database migrated by a newer daemon', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('pauses claiming with SCHEMA_NEWER on /api/health until the schema is one this daemon knows', async () => {
    d = await startTestDaemon({ tickMs: 100 }, { schemaCheckMs: 100, noOrchestrator: true });
    const { store, bus } = d;
    const health = async () => (await daemonRequest<HealthReport>(d!, 'GET', '/api/health')).body;
    const project = await store.projects.create({ name: 'p', repoPath: makeRepo() });
    const task = await store.tasks.create({ projectId: project.id, title: 'Waits', complexity: 'easy' });

    // What a newer daemon's migration leaves.
    await store.db.run(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'from a newer maestro', 0)`, [LATEST_SCHEMA_VERSION + 1]);
    const newer = await until(bus, async () => ((await health()).ok ? null : await health()), 'SCHEMA_NEWER on /api/health');
    expect(newer.conditions).toEqual([expect.objectContaining({ code: 'SCHEMA_NEWER', message: expect.stringContaining(`schema version ${LATEST_SCHEMA_VERSION + 1}, newer than this Maestro knows (${LATEST_SCHEMA_VERSION})`) })]);
    expect(newer.conditions[0]!.message).toContain('upgrade it and restart it');
    for (let i = 0; i < 3; i++) await d.orchestrator.tick();
    expect(await store.tasks.get(task.id)).toMatchObject({ status: 'ready', claimedBy: null });
    expect((await store.events.list({ taskId: task.id, type: 'task.status' })).events).toEqual([]);

    await store.db.run(`DELETE FROM schema_migrations WHERE version = $1`, [LATEST_SCHEMA_VERSION + 1]);
    await until(bus, async () => (await health()).ok, 'health ok again');
    await d.orchestrator.tick();
    // Claimed (the project has no agent, so its run is refused at once: the claim is what counts here).
    const moves = (await store.events.list({ taskId: task.id, type: 'task.status' })).events.map((e) => e.payload);
    expect(moves[0]).toMatchObject({ from: 'ready', to: 'queued' });
  });
});
