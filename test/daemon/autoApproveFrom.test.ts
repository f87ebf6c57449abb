/**
 * Auto-approval switched on while a task waits at its gate (core/autoApproval.ts): the task keeps waiting for a
 * person, and the tasks that reach a gate after it are approved and merged, across a restart too; on SQLite, and
 * with two daemons on one PostgreSQL. Real daemons, a real repository, the scripted agent in real workers; the
 * setting changed through the API, as a client does.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { terminalLine } from '../../src/cli/commands/serve.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { untilStatus } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/note-per-title.yaml', import.meta.url));

/**
 * The daemons of one case: `api` takes the setting's change (as a client sends it), `runner` runs the tasks and
 * approves what it may; `restart` stops the runner and starts another on the same database.
 */
interface Daemons {
  api(): TestDaemon;
  runner(): TestDaemon;
  restart(): Promise<void>;
}

/**
 * A task waits at exec_review; auto-approval is switched on through the API; a task created after it is approved and
 * merged (the runner's auto-approval ran after the change, over every task at a gate) while the first still waits;
 * after a restart another is approved and the first still waits; a person approves it.
 */
async function leavesTheWaitingTaskToAPerson(d: Daemons, repo: string): Promise<void> {
  const config = { provider: { kind: 'scripted', script: SCRIPT } };
  const project = await d.runner().store.projects.create({ name: 'repo', repoPath: repo, config });
  const task = async (title: string) => (await d.runner().store.tasks.create({ projectId: project.id, title, complexity: 'easy', ownedFiles: [`notes/${title}.md`] })).id;
  const waiting = await task('waiting');
  await untilStatus(d.runner(), waiting, 'exec_review');

  const on = await daemonRequest<{ autoApproval: unknown }>(d.api(), 'PATCH', `/api/projects/${project.id}`, { config: { ...config, autoApproveAfterMs: 0 }, who: 'mallory' });
  expect(on.status).toBe(200);
  expect(on.body.autoApproval).toEqual({ afterMs: 0, previousMs: null, waiting: 1 });
  // Marked as a sensitive change, as a provider's is, with what it means.
  const [change] = (await d.runner().store.events.list({ projectId: project.id, type: 'project.config' })).events;
  expect(change!.payload).toMatchObject({ name: 'repo', who: 'mallory', changed: ['autoApproveAfterMs'], code: { autoApproveAfterMs: { before: null, after: 0 } }, autoApproval: { afterMs: 0, previousMs: null, waiting: 1 } });
  expect(terminalLine(change!, 'project repo')).toMatch(/settings changed by mallory from 127\.0\.0\.1 \(test\): autoApproveAfterMs unset → 0; tasks reaching a gate from now on are approved after 0 ms without a person; the 1 already waiting still waits for you$/);

  const after = await task('after');
  await taskDone(d.runner(), after, 60_000);
  expect((await d.runner().store.tasks.get(waiting)).status).toBe('exec_review');
  const approved = (await d.runner().store.events.list({ taskId: after, type: 'task.status' })).events.find((e) => e.payload.decision === 'approve')!;
  expect(approved.payload).toMatchObject({ from: 'exec_review', to: 'merging', who: 'auto-approve' });
  expect(terminalLine(approved, 'after')).toMatch(/exec_review → merging {2}\(approved without a person: the project's autoApproveAfterMs \(0 ms\) passed\)$/);

  // Where it took effect is the database's: a restarted daemon reads it as it was.
  await d.restart();
  const later = await task('later');
  await taskDone(d.runner(), later, 60_000);
  const still = await d.runner().store.tasks.get(waiting);
  expect(still.status).toBe('exec_review');
  expect(still.approvals).toEqual([]);
  expect(git(repo, 'ls-tree', '--name-only', 'main', 'notes/')).toBe('notes/after.md\nnotes/later.md');

  // The person it waited for approves it.
  await d.runner().store.tasks.approve(waiting, 'exec_review', 'ann');
  await taskDone(d.runner(), waiting, 60_000);
}

describe('auto-approval from its change on', () => {
  const running = new Set<TestDaemon>();
  const start = async (...args: Parameters<typeof startTestDaemon>) => {
    const d = await startTestDaemon(...args);
    running.add(d);
    return d;
  };
  const stop = async (d: TestDaemon) => {
    running.delete(d);
    await d.stop({ graceMs: 2000 });
  };
  afterEach(async () => {
    for (const d of [...running]) await stop(d);
    removeTempDirs();
  });

  it('leaves a task waiting at exec_review to a person, approves the ones reaching a gate after, and keeps that across a restart', { timeout: budget(180_000) }, async () => {
    const home = tempDir('maestro-home-');
    let daemon = await start({ home, tickMs: 100 });
    await leavesTheWaitingTaskToAPerson({
      api: () => daemon,
      runner: () => daemon,
      restart: async () => {
        await stop(daemon);
        daemon = await start({ home, tickMs: 100 });
      },
    }, makeRepo());
  });

  it.skipIf(!pgAvailable())('does so with several daemons on one PostgreSQL: the change through one, the approvals by another', { timeout: budget(180_000) }, async () => {
    const { db, url } = await freshPostgres();
    await db.close();
    const root = tempDir('maestro-daemons-');
    const api = await start({ name: 'a', database: url, home: join(root, 'a') }, { noOrchestrator: true });
    const runner = () => start({ name: 'b', database: url, home: join(root, 'b'), tickMs: 100 });
    let b = await runner();
    await leavesTheWaitingTaskToAPerson({
      api: () => api,
      runner: () => b,
      restart: async () => {
        await stop(b);
        b = await runner();
      },
    }, makeRepo());
  });
});
