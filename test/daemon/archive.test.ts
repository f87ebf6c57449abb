/**
 * Archiving a project through a running daemon and the CLI: refused while work runs (naming it), then
 * the project keeps its tasks and history but takes no new work: no task, no retry, no claim, and a task
 * claimed just before the archive goes back to ready instead of starting a run. Restored, work goes on.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project, Task } from '../../src/core/types.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { cliFor } from '../cli/helpers.js';

describe('archiving a project', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('is refused while a task runs, then keeps the project without new work until it is restored', async () => {
    const script = join(tempDir('maestro-archive-'), 'hang.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - hang: true\n');
    d = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = d;
    const { cli, cliJson } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const project = await store.projects.create({ name: 'shop', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script } } });
    const first = await store.tasks.create({ projectId: project.id, title: 'Hangs', complexity: 'easy' });
    // Waits on the first: not claimable while the archive is tried.
    const second = await store.tasks.create({ projectId: project.id, title: 'After it', complexity: 'easy', deps: [first.id] });
    d.orchestrator.kick();
    await poll(async () => (await store.runs.list({ taskId: first.id })).find((r) => r.workerPid) ?? null, 'a worker at work', 60_000);

    const busy = await cliJson<{ error: { code: string; message: string } }>(['project', 'archive', 'shop', ...url]);
    expect(busy.code).toBe(1);
    expect(busy.body.error.code).toBe('PROJECT_BUSY');
    expect(busy.body.error.message).toContain(`${first.id} (executing)`);
    expect((await store.projects.get(project.id)).archivedAt).toBeNull();

    expect((await cli(['task', 'cancel', first.id, ...url])).code).toBe(0);
    const archived = await cli(['project', 'archive', 'shop', ...url]);
    expect(archived.stdout).toContain(`Archived project shop (${project.id}).`);
    const event = (await store.events.list({ projectId: project.id, type: 'project.archived' })).events[0];
    expect(event?.payload).toMatchObject({ name: 'shop', who: 'human', from: { address: expect.any(String) } });

    // Listed apart, shown as archived, and closed to new work.
    expect((await cli(['project', 'list', ...url])).stdout).toContain('No projects yet. Add one with `maestro project add <path>`.\n(1 archived: `maestro project list --all`)');
    expect((await cli(['project', 'list', '--all', ...url])).stdout).toMatch(/shop .* archived 20\d\d-/);
    expect((await cli(['project', 'show', 'shop', ...url])).stdout).toContain('no new work (`maestro project restore shop`)');
    const create = await cliJson<{ error: { code: string; message: string } }>(['task', 'create', 'More', '--project', 'shop', ...url]);
    expect(create.body.error).toMatchObject({ code: 'PROJECT_ARCHIVED', message: expect.stringContaining('no task can be created in it') });
    const retry = await cliJson<{ error: { code: string } }>(['task', 'retry', first.id, ...url]);
    expect(retry.body.error.code).toBe('PROJECT_ARCHIVED');
    expect((await store.tasks.get(first.id)).status).toBe('cancelled');

    // A claim that committed after the archive looked (another daemon's, in a team): no run starts, the task is ready again.
    await store.tasks.claim(second.id, d.config.name, 60_000);
    d.orchestrator.kick();
    await until(bus, async () => ((await store.tasks.get(second.id)).status === 'ready' ? true : null), 'the claim given back', 60_000);
    const refused = (await store.events.list({ taskId: second.id, type: 'run.refused' })).events[0];
    expect(refused?.payload.message).toContain('Project shop is archived: no run starts in it');
    expect(await store.runs.list({ taskId: second.id })).toEqual([]);

    const restored = await cliJson<{ project: Project }>(['project', 'restore', 'shop', ...url]);
    expect(restored.body.project.archivedAt).toBeNull();
    expect((await cliJson<{ task: Task }>(['task', 'retry', first.id, ...url])).body.task.status).toBe('ready');
    d.orchestrator.kick();
    await poll(async () => (await store.runs.list({ taskId: first.id })).find((r) => r.status === 'running' && r.workerPid) ?? null, 'work again after the restore', 60_000);
  }, budget(240_000));
});
