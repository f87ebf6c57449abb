/**
 * What a merge check with no run yet says (daemon/conflictRuns.ts, store/ops/mergeCheckAtWork.ts,
 * api/routes/mergeCheckNow.ts), on the board and in `task show`:
 * - waiting for a worker only once its daemon found every run slot taken (a `merge.waiting` event), and the task
 *   approved behind it names it as the check it waits for; then the slot frees, the check runs, and both land;
 * - starting, while its run is being started on a free slot (held here by a push of main the remote keeps waiting):
 *   before, every check read "waiting for a worker" from its `merge.check` to its `run.started`;
 * - left behind, when the daemon that opened it died before its run started: before, it read "waiting for a worker
 *   on daemon a" though a was gone; another daemon takes it over at its next merge pass, and it lands.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskDetail } from '../../src/api/wire/responses.js';
import type { TaskSummary } from '../../src/core/taskSummary.js';
import type { Task } from '../../src/core/types.js';
import { releaseMergeLease, takeMergeLease } from '../../src/store/ops/daemons.js';
import { cliFor } from '../cli/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git, makeRepo } from '../helpers/repo.js';
import { poll, until, untilStatus } from '../helpers/wait.js';
import { filePerTaskScript } from './filePerTask.js';

// "Hold" holds the daemon's one run slot until it is cancelled.
const SCRIPT = `${filePerTaskScript(['a', 'b', 'd'])}  - match: { role: execute, title: "Hold" }
    actions:
      - hang: true
`;

const CHECKS = { mergeStrategy: 'merge', checks: [{ name: 'readme', command: 'test -f README.md' }] };

/** The project's tasks "Add <n>", created and run up to exec_review on `d`, by the file-per-task script. */
async function reviewed(d: TestDaemon, repo: string, names: readonly string[], config: Record<string, unknown> = {}) {
  const script = join(tempDir('maestro-script-'), 'script.yaml');
  writeFileSync(script, SCRIPT);
  const provider = { provider: { kind: 'scripted' as const, script } };
  const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { ...provider, ...config } });
  const tasks: Task[] = [];
  for (const n of names) tasks.push(await d.store.tasks.create({ projectId: project.id, title: `Add ${n}`, complexity: 'easy' }));
  d.orchestrator.kick();
  for (const t of tasks) await untilStatus(d, t.id, 'exec_review', ['needs_attention', 'done']);
  return { project, tasks, provider };
}

/** Another project's run takes a slot of `d`, and keeps it. */
async function holdASlot(d: TestDaemon, provider: Record<string, unknown>): Promise<Task> {
  const other = await d.store.projects.create({ name: 'q', repoPath: makeRepo({ 'README.md': '# q\n' }), config: provider });
  const hold = await d.store.tasks.create({ projectId: other.id, title: 'Hold', complexity: 'easy' });
  d.orchestrator.kick();
  await until(d.bus, async () => (await d.store.runs.list({ taskId: hold.id, status: 'running' })).length > 0, 'the slot taken');
  return hold;
}

/**
 * The two approved together, while another daemon holds the project's merge lease, so that one train takes both: the
 * first fast-forwards, the second is no fast-forward of the main the first leaves, so it must be checked.
 */
async function approvedTogether(d: TestDaemon, projectId: string, two: readonly Task[]): Promise<void> {
  const lease = { projectId, owner: 'another-daemon', now: d.store.clock(), leaseMs: 10 * 60_000 };
  expect(await takeMergeLease(d.store.db, lease)).toBe(true);
  for (const t of two) expect((await daemonRequest(d, 'POST', `/api/tasks/${t.id}/approve`, { who: 'ada' })).status).toBe(200);
  await releaseMergeLease(d.store.db, projectId, lease.owner);
  d.orchestrator.kick();
}

const detailOf = async (d: TestDaemon, id: string) => (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${id}`)).body;
const cardOf = async (d: TestDaemon, projectId: string, id: string) => (await daemonRequest<{ tasks: TaskSummary[] }>(d, 'GET', `/api/tasks?view=board&projectId=${projectId}`)).body.tasks.find((t) => t.id === id);
const waitsSaid = async (d: TestDaemon, id: string) => (await d.store.events.list({ taskId: id, type: 'merge.waiting' })).events.map((e) => e.payload);

describe('a merge check with no run yet', () => {
  let daemon: TestDaemon | null = null;
  let other: TestDaemon | null = null;
  afterEach(async () => {
    await other?.stop({ graceMs: 2000 });
    await daemon?.stop({ graceMs: 2000 });
    daemon = other = null;
    removeTempDirs();
  });

  it('says it waits for a worker once every slot is taken, and the task behind it names it; once the slot frees it runs and both land', async () => {
    const repo = makeRepo({ 'README.md': '# p\n', '.maestro/config.json': JSON.stringify(CHECKS) });
    const d = (daemon = await startTestDaemon({ tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 }));
    const { project, tasks, provider } = await reviewed(d, repo, ['a', 'b', 'd']);
    const hold = await holdASlot(d, provider);
    const [first, checked, last] = tasks as [Task, Task, Task];
    await approvedTogether(d, project.id, [first, checked]);
    await untilStatus(d, first.id, 'done');

    const waiting = await until(d.bus, async () => {
      const detail = await detailOf(d, checked.id);
      return detail.mergeCheck?.state === 'waiting' ? detail : null;
    }, 'the merge check said to wait for a worker');
    expect(waiting.task.status).toBe('merging');
    expect(waiting.mergeCheck).toEqual({ runId: null, daemon: d.config.name, check: null, round: 1, maxRounds: 3, state: 'waiting' });
    // Said once, by the daemon that found no slot, however many ticks tried it since.
    expect(await waitsSaid(d, checked.id)).toEqual([{ kind: 'merge_check', owner: d.config.name }]);
    // No run of it yet: the slot is still taken.
    expect((await d.store.runs.list({ taskId: checked.id })).filter((r) => r.kind === 'merge_check')).toEqual([]);
    const show = await cliFor(d.config.home).cli(['task', 'show', checked.id, '--url', d.url]);
    expect(show.stdout).toContain(`Merge check waiting for a worker: its merge with main must pass the project's checks before it lands, and every run slot on daemon ${d.config.name} is taken (maxConcurrentRuns).`);
    expect((await cardOf(d, project.id, checked.id))?.mergeCheck).toEqual({ round: 1, maxRounds: 3, state: 'waiting' });

    // Approved now, "Add d" waits for that check's turn, and says whose.
    expect((await daemonRequest(d, 'POST', `/api/tasks/${last.id}/approve`, { who: 'ada' })).status).toBe(200);
    await untilStatus(d, last.id, 'merging');
    const turn = await detailOf(d, last.id);
    expect(turn.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title } });
    expect(turn.mergeCheck).toBeNull();
    expect((await cardOf(d, project.id, last.id))?.mergeTurn).toEqual({ behind: { id: checked.id, title: checked.title } });
    const showTurn = await cliFor(d.config.home).cli(['task', 'show', last.id, '--url', d.url]);
    expect(showTurn.stdout).toContain(`Waiting for its turn to merge: the merge check of ${checked.title} (${checked.id})`);

    // The slot frees: the check runs, and both land.
    expect((await daemonRequest(d, 'POST', `/api/tasks/${hold.id}/cancel`, { who: 'ada' })).status).toBe(200);
    for (const t of [checked, last]) await untilStatus(d, t.id, 'done');
    expect((await d.store.runs.list({ taskId: checked.id })).filter((r) => r.kind === 'merge_check').map((r) => r.status)).toEqual(['succeeded']);
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt', 'd.txt']));
    expect((await detailOf(d, checked.id)).mergeCheck).toBeNull();
  });

  it('says a check whose run is being started on a free slot is starting, never that it waits for a worker; it runs and lands', async () => {
    const root = tempDir('maestro-remote-');
    const remote = bareRemote(root, { 'README.md': '# p\n', '.maestro/config.json': JSON.stringify(CHECKS) });
    const d = (daemon = await startTestDaemon({ tickMs: 100 }));
    const { project, tasks } = await reviewed(d, remote, ['a', 'b'], { remote });
    const [first, checked] = tasks as [Task, Task];
    // The remote keeps a push of main waiting while `hold` is there: the train's push of the first change, which
    // comes after the train opened the second's check and before that check's run may start.
    const hold = join(root, 'hold');
    const held = join(root, 'held');
    const wait = `i=0; while [ -e '${hold}' ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done`;
    writeFileSync(join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = refs/heads/main ]; then touch '${held}'; ${wait}; fi\ndone\n`, { mode: 0o755 });
    writeFileSync(hold, '');
    try {
      await approvedTogether(d, project.id, [first, checked]);
      await poll(() => existsSync(held), "the train's push of main, held by the remote");

      // The check is opened (its merge.check), its run not started, and a slot is free: it is starting.
      expect((await d.store.events.list({ taskId: checked.id, type: 'merge.check' })).events).toHaveLength(1);
      expect((await detailOf(d, checked.id)).mergeCheck).toEqual({ runId: null, daemon: d.config.name, check: null, round: 1, maxRounds: 3, state: 'starting' });
      expect((await cardOf(d, project.id, checked.id))?.mergeCheck).toEqual({ round: 1, maxRounds: 3, state: 'starting' });
      const show = await cliFor(d.config.home).cli(['task', 'show', checked.id, '--url', d.url]);
      expect(show.stdout).toContain(`Starting its merge check: its merge with main must pass the project's checks before it lands, and daemon ${d.config.name} is starting the check's run on a free run slot.`);
      expect(show.stdout).not.toContain('waiting for a worker');
    } finally {
      // Let go on a failure too: the daemon's stop would wait for the held push.
      rmSync(hold, { force: true });
    }
    for (const t of [first, checked]) await untilStatus(d, t.id, 'done');
    expect((await d.store.runs.list({ taskId: checked.id })).filter((r) => r.kind === 'merge_check').map((r) => r.status)).toEqual(['succeeded']);
    // A slot was free all along: no wait for a worker was ever said.
    expect(await waitsSaid(d, checked.id)).toEqual([]);
    expect(git(remote, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });

  it('says a check whose daemon died before its run started is left behind, naming it; another daemon takes it over and it lands', async () => {
    // Two daemons on one database, each with its clone of the shared remote.
    const remote = bareRemote(tempDir('maestro-remote-'), { 'README.md': '# p\n', '.maestro/config.json': JSON.stringify(CHECKS) });
    // Its leases long: the held task stays a's claim while b runs (b takes over the merge check, nothing else).
    const a = (daemon = await startTestDaemon({ name: 'a', tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0, leaseMs: 10 * 60_000 }));
    const { project, tasks, provider } = await reviewed(a, remote, ['a', 'b'], { remote });
    const hold = await holdASlot(a, provider);
    const [first, checked] = tasks as [Task, Task];
    await approvedTogether(a, project.id, [first, checked]);
    await untilStatus(a, first.id, 'done');
    await until(a.bus, async () => (await detailOf(a, checked.id)).mergeCheck?.state === 'waiting', "a's merge check waiting for a worker");

    // Another daemon's lease keeps every train off the project for now, then a dies: stopped at once, as a crash stops
    // it, its name off the registry as a kill -9 leaves it once its heartbeat is stale (the held task's worker ended here).
    const lease = { projectId: project.id, owner: 'another-daemon', now: a.store.clock(), leaseMs: 10 * 60_000 };
    expect(await takeMergeLease(a.store.db, lease)).toBe(true);
    const [holding] = await a.store.runs.list({ taskId: hold.id, status: 'running' });
    await a.abandon();
    daemon = null;
    process.kill(-holding!.workerPid!, 'SIGKILL');

    // b, on the same database, says whose check it was and that nobody will start it there.
    const b = (other = await startTestDaemon({ name: 'b', database: a.config.database, tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 }));
    expect((await detailOf(b, checked.id)).mergeCheck).toEqual({ runId: null, daemon: 'a', check: null, round: 1, maxRounds: 3, state: 'ownerGone' });
    expect((await cardOf(b, project.id, checked.id))?.mergeCheck).toEqual({ round: 1, maxRounds: 3, state: 'ownerGone' });
    const show = await cliFor(b.config.home).cli(['task', 'show', checked.id, '--url', b.url]);
    expect(show.stdout).toContain("Merge check left behind: its merge with main must pass the project's checks before it lands, and daemon a, which opened it, is no longer running (stopped, or no heartbeat), so its run will not start there. Another daemon takes the check over at its next merge pass");
    expect(show.stdout).not.toContain('waiting for a worker');

    // The lease released, b's next merge pass takes the check over: opened again under b's name, run there, landed.
    await releaseMergeLease(b.store.db, project.id, lease.owner);
    b.orchestrator.kick();
    await untilStatus(b, checked.id, 'done');
    expect((await b.store.events.list({ taskId: checked.id, type: 'merge.check' })).events.map((e) => e.payload.owner).sort()).toEqual(['a', 'b']);
    expect((await b.store.runs.list({ taskId: checked.id })).filter((r) => r.kind === 'merge_check').map((r) => [r.owner, r.status])).toEqual([['b', 'succeeded']]);
    expect(git(remote, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });
});
