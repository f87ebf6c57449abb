/**
 * A project's folder moved away while its task is approved, end to end: a real daemon, real git, the scripted
 * agent in real workers. Before, the task stayed in `merging` for good with no error of its own, the merge's
 * failure and its stack were logged at every tick, and health said nothing. Now the task waits for the person
 * with what happened and what to do, /api/health and `maestro doctor` name the project until the folder is back,
 * and `task retry` then merges it.
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../src/daemon/health.js';
import { cleanEnv, cliJson } from '../cli/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe("a project's folder gone while its task is approved", () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('parks the task with the reason, logged once, names the project in health and doctor, and a retry merges once it is back', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const { store, bus } = d;
    const health = async () => (await daemonRequest<HealthReport>(d, 'GET', '/api/health')).body;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'exec_review');

    renameSync(repo, `${repo}.moved`);
    const gone = `the folder ${repo} of project p is gone (moved or deleted)`;
    // Said at the gate, before the approval.
    expect((await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toBe(`${gone}: put it back`);
    expect(await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, {})).toMatchObject({ status: 200, body: { task: { status: 'merging' } } });
    d.orchestrator.kick();
    const parked = await untilStatus(d, task.id, 'needs_attention', ['done']);
    expect(parked.lastRunError).toBe(`${gone}; nothing was merged: put it back, then run \`maestro task retry ${task.id}\` to merge it`);

    const missing = await until(bus, async () => ((await health()).conditions.length ? health() : null), 'the missing folder on /api/health');
    expect(missing).toMatchObject({ ok: false, conditions: [{ code: 'PROJECT_FOLDER_MISSING', path: repo, message: expect.stringContaining(`The folder ${repo} of project p is gone (moved or deleted): its approved work cannot merge`) }] });
    const doctor = await cliJson<{ checks: { name: string; status: string; detail: string }[] }>(['doctor', '--url', d.url], cleanEnv({ MAESTRO_HOME: tempDir(), MAESTRO_TOKEN: d.token! }));
    expect(doctor.body.checks).toContainEqual({ name: 'daemon health', status: 'fail', detail: expect.stringContaining(`PROJECT_FOLDER_MISSING: The folder ${repo} of project p is gone`) });
    // More merge rounds and ticks change nothing and say nothing more: the log has the condition once, and no error.
    for (let i = 0; i < 3; i++) {
      await d.orchestrator.tick();
      await d.orchestrator.merges.tick();
    }
    const about = d.logs.filter((l) => l.includes(repo));
    expect(about).toHaveLength(1);
    expect(JSON.parse(about[0]!)).toMatchObject({ level: 40, msg: missing.conditions[0]!.message });
    expect(d.logs.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);

    renameSync(`${repo}.moved`, repo);
    await until(bus, async () => (await health()).ok, 'health ok once the folder is back');
    expect(await daemonRequest(d, 'POST', `/api/tasks/${task.id}/retry`)).toMatchObject({ status: 200, body: { task: { status: 'merging' } } });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'done');
    expect(readFileSync(join(repo, 'src', 'greet.ts'), 'utf8')).toBe("export const greet = () => 'hello';\n");
    expect(existsSync(`${repo}.moved`)).toBe(false);
  });
});
