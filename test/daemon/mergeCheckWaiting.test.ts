/**
 * A merge check that waits for a worker (daemon/conflictRuns.ts: the train opened it while every run slot was taken)
 * says so (api/routes/mergeCheckNow.ts, store/ops/mergeCheckAtWork.ts): the task itself, on the board and in `task show`,
 * and the task approved behind it names it as the check it waits for. Before, only a running check was seen, and both
 * stood in merging saying nothing, as if stuck. Then the slot frees, the check runs, and both land.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskDetail } from '../../src/api/wire/responses.js';
import type { TaskSummary } from '../../src/core/taskSummary.js';
import type { Task } from '../../src/core/types.js';
import { releaseMergeLease, takeMergeLease } from '../../src/store/ops/daemons.js';
import { cliFor } from '../cli/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { filePerTaskScript } from './filePerTask.js';

// "Hold" holds the daemon's one run slot until it is cancelled.
const SCRIPT = `${filePerTaskScript(['a', 'b', 'd'])}  - match: { role: execute, title: "Hold" }
    actions:
      - hang: true
`;

describe('a merge check waiting for a worker', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('says it waits for a worker, and the task behind it names it; once the slot frees it runs and both land', async () => {
    const repo = makeRepo({ 'README.md': '# p\n', '.maestro/config.json': JSON.stringify({ mergeStrategy: 'merge', checks: [{ name: 'readme', command: 'test -f README.md' }] }) });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = (daemon = await startTestDaemon({ tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 }));
    const provider = { provider: { kind: 'scripted' as const, script } };
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: provider });
    const tasks: Task[] = [];
    for (const n of ['a', 'b', 'd']) tasks.push(await d.store.tasks.create({ projectId: project.id, title: `Add ${n}`, complexity: 'easy' }));
    d.orchestrator.kick();
    for (const t of tasks) await untilStatus(d, t.id, 'exec_review', ['needs_attention', 'done']);

    // Another project's run takes the one slot, and keeps it.
    const other = await d.store.projects.create({ name: 'q', repoPath: makeRepo({ 'README.md': '# q\n' }), config: provider });
    const hold = await d.store.tasks.create({ projectId: other.id, title: 'Hold', complexity: 'easy' });
    d.orchestrator.kick();
    await until(d.bus, async () => (await d.store.runs.list({ taskId: hold.id, status: 'running' })).length > 0, 'the slot taken');

    // "Add a" and "Add b" approved together: a fast-forwards, b is no fast-forward of the main a leaves, so it must be checked.
    const lease = { projectId: project.id, owner: 'another-daemon', now: d.store.clock(), leaseMs: 10 * 60_000 };
    expect(await takeMergeLease(d.store.db, lease)).toBe(true);
    for (const t of tasks.slice(0, 2)) expect((await daemonRequest(d, 'POST', `/api/tasks/${t.id}/approve`, { who: 'ada' })).status).toBe(200);
    await releaseMergeLease(d.store.db, project.id, lease.owner);
    d.orchestrator.kick();
    const [first, checked, last] = tasks as [Task, Task, Task];
    await untilStatus(d, first.id, 'done');

    const waiting = await until(d.bus, async () => {
      const detail = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${checked.id}`)).body;
      return detail.mergeCheck?.waiting ? detail : null;
    }, 'the merge check said to wait for a worker');
    expect(waiting.task.status).toBe('merging');
    expect(waiting.mergeCheck).toEqual({ runId: null, daemon: d.config.name, check: null, round: 1, maxRounds: 3, waiting: true });
    // No run of it yet: the slot is still taken.
    expect((await d.store.runs.list({ taskId: checked.id })).filter((r) => r.kind === 'merge_check')).toEqual([]);
    const show = await cliFor(d.config.home).cli(['task', 'show', checked.id, '--url', d.url]);
    expect(show.stdout).toContain(`Merge check waiting for a worker: its merge with main must pass the project's checks before it lands, and every run slot on daemon ${d.config.name} is taken (maxConcurrentRuns).`);
    const board = async () => (await daemonRequest<{ tasks: TaskSummary[] }>(d, 'GET', `/api/tasks?view=board&projectId=${project.id}`)).body.tasks;
    expect((await board()).find((t) => t.id === checked.id)?.mergeCheck).toEqual({ round: 1, maxRounds: 3, waiting: true });

    // Approved now, "Add d" waits for that check's turn, and says whose.
    expect((await daemonRequest(d, 'POST', `/api/tasks/${last.id}/approve`, { who: 'ada' })).status).toBe(200);
    await untilStatus(d, last.id, 'merging');
    const turn = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${last.id}`)).body;
    expect(turn.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title } });
    expect(turn.mergeCheck).toBeNull();
    expect((await board()).find((t) => t.id === last.id)?.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title } });
    const showTurn = await cliFor(d.config.home).cli(['task', 'show', last.id, '--url', d.url]);
    expect(showTurn.stdout).toContain(`Waiting for its turn to merge: the merge check of ${checked.title} (${checked.id})`);

    // The slot frees: the check runs, and both land.
    expect((await daemonRequest(d, 'POST', `/api/tasks/${hold.id}/cancel`, { who: 'ada' })).status).toBe(200);
    for (const t of [checked, last]) await untilStatus(d, t.id, 'done');
    expect((await d.store.runs.list({ taskId: checked.id })).filter((r) => r.kind === 'merge_check').map((r) => r.status)).toEqual(['succeeded']);
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt', 'd.txt']));
    expect((await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${checked.id}`)).body.mergeCheck).toBeNull();
  });
});
