/**
 * The merge queue's turns (daemon/mergeQueue.ts): five changes approved together, each no fast-forward of the main the
 * one before it leaves, all land, checked once on the main they land on. Checked each on its own on the same main, the
 * first to pass moved it, the others were checked again, and the fifth ran out of rounds: a person was asked though
 * nothing but the queue itself had moved main. The four behind the first are checked together (mergeBatch.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskDetail } from '../../src/api/wire/responses.js';
import type { TaskSummary } from '../../src/core/taskSummary.js';
import type { Task } from '../../src/core/types.js';
import { releaseMergeLease, takeMergeLease } from '../../src/store/ops/daemons.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { filePerTaskScript } from './filePerTask.js';

const NAMES = ['a', 'b', 'c', 'd', 'e'];
const SCRIPT = filePerTaskScript(NAMES);

describe('the merge queue runs one merge check at a time', () => {
  let daemon: TestDaemon | null = null;
  let releaseDir: string | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    if (releaseDir) rmSync(releaseDir, { recursive: true, force: true });
    releaseDir = null;
    removeTempDirs();
  });

  /**
   * Tasks "Add <n>" for each of `names` in a project merging with `merge` and `checks`, all at exec_review, then the
   * first `approve` of them approved together: while another daemon's train holds the project's merge lease, so that
   * none is merged before the others come.
   */
  async function approvedTogether(checks: Array<{ name: string; command: string }>, names: readonly string[], approve = names.length) {
    const repo = makeRepo({ 'README.md': '# p\n', '.maestro/config.json': JSON.stringify({ mergeStrategy: 'merge', checks }) });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = (daemon = await startTestDaemon({ tickMs: 100 }));
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const tasks: Task[] = [];
    for (const n of names) tasks.push(await d.store.tasks.create({ projectId: project.id, title: `Add ${n}`, complexity: 'easy' }));
    d.orchestrator.kick();
    for (const t of tasks) await untilStatus(d, t.id, 'exec_review', ['needs_attention', 'done']);
    const lease = { projectId: project.id, owner: 'another-daemon', now: d.store.clock(), leaseMs: 10 * 60_000 };
    expect(await takeMergeLease(d.store.db, lease)).toBe(true);
    for (const t of tasks.slice(0, approve)) expect((await daemonRequest(d, 'POST', `/api/tasks/${t.id}/approve`, { who: 'ada' })).status).toBe(200);
    await releaseMergeLease(d.store.db, project.id, lease.owner);
    d.orchestrator.kick();
    return { d, repo, project, tasks };
  }

  it('lands five changes approved together, each merge checked once, and asks nobody', async () => {
    const { d, repo, tasks } = await approvedTogether([{ name: 'readme', command: 'test -f README.md' }], NAMES);

    const settled = await until(d.bus, async () => {
      const all = await Promise.all(tasks.map((t) => d.store.tasks.get(t.id)));
      return all.every((t) => t.status === 'done' || t.status === 'needs_attention') ? all : null;
    }, 'all five merged or parked');
    expect(settled.map((t) => `${t.title}: ${t.status}${t.lastRunError ? ` (${t.lastRunError})` : ''}`)).toEqual(NAMES.map((n) => `Add ${n}: done`));
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(NAMES.map((n) => `${n}.txt`)));
    // One change went first as a fast-forward; the other four were checked together, once (MAX_BATCH is 4).
    const checks = await Promise.all(tasks.map(async (t) => (await d.store.runs.list({ taskId: t.id })).filter((r) => r.kind === 'merge_check').map((r) => r.status)));
    expect(checks.flat()).toEqual(['succeeded']);
  });

  it('a task waiting behind another task\'s merge check says whose check runs, and that it lands after it (or with it, checked together)', async () => {
    // The check holds while two of the changes are in the tree (only a merge check sees two: each run sees its own),
    // until the test creates the release file: the test decides when the first merge check ends. Under /var/tmp: a
    // check runs in the agent sandbox, whose /tmp is its own.
    releaseDir = mkdtempSync('/var/tmp/maestro-release-');
    const release = join(releaseDir, 'release');
    const command = `n=0; for f in a.txt b.txt c.txt; do [ -f $f ] && n=$((n+1)); done; [ $n -lt 2 ] || while [ ! -f '${release}' ]; do sleep 0.1; done`;
    const { d, project, tasks } = await approvedTogether([{ name: 'held', command }], ['a', 'b', 'c', 'd'], 3);

    // One lands as a fast-forward; the next one's merge check runs, held, with the third checked together with it.
    const checked = await until(d.bus, async () => {
      for (const t of tasks) if ((await d.store.runs.list({ taskId: t.id, status: 'running' })).some((r) => r.kind === 'merge_check')) return t;
      return null;
    }, 'a merge check at work');
    const rider = await until(d.bus, async () => {
      for (const t of tasks.slice(0, 3)) if (t.id !== checked.id && (await d.store.tasks.get(t.id)).status === 'merging') return t;
      return null;
    }, 'a task checked together with it, in merging');
    const together = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${rider.id}`)).body;
    expect(together.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title }, together: 2 });
    expect(together.mergeCheck).toBeNull();
    // The fourth, approved while that check runs, is not in it: it waits for its turn.
    const waiting = tasks[3]!;
    expect((await daemonRequest(d, 'POST', `/api/tasks/${waiting.id}/approve`, { who: 'ada' })).status).toBe(200);
    await untilStatus(d, waiting.id, 'merging');
    const detail = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${waiting.id}`)).body;
    expect(detail.task.status).toBe('merging');
    expect(detail.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title } });
    expect(detail.mergeCheck).toBeNull();
    const own = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${checked.id}`)).body;
    expect(own.mergeTurn).toBeNull();
    expect(own.mergeCheck).not.toBeNull();
    // The board's rows say the same, read once for the project.
    const board = (await daemonRequest<{ tasks: TaskSummary[] }>(d, 'GET', `/api/tasks?view=board&projectId=${project.id}`)).body.tasks;
    expect(board.find((t) => t.id === waiting.id)?.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title } });
    expect(board.find((t) => t.id === rider.id)?.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title }, together: 2 });
    expect(board.find((t) => t.id === checked.id)?.mergeTurn).toBeNull();

    writeFileSync(release, '');
    for (const t of tasks) await untilStatus(d, t.id, 'done');
    expect((await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${waiting.id}`)).body.mergeTurn).toBeNull();
  });
});
