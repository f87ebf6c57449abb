/**
 * maxConcurrentRuns bounds every run the daemon starts, the next stage of a task it already
 * claimed included: such a stage waits for a slot, and no new task is claimed while it waits.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run, Task } from '../../src/core/types.js';
import type { OrchestratorHooks } from '../../src/daemon/orchestrator.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { openMigratedDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

// Each stage takes a moment, so stages of different tasks overlap unless something holds them apart.
const SCRIPT = `steps:
  - match: { role: execute }
    actions:
      - wait: 150
      - write: { path: "out/{{title}}.txt", content: "{{title}}\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

async function allDone(store: Store, bus: TestDaemon['bus'], tasks: Task[]): Promise<void> {
  await until(bus, async () => {
    const now = await Promise.all(tasks.map((t) => store.tasks.get(t.id)));
    const stuck = now.find((t) => t.status === 'needs_attention');
    if (stuck) throw new Error(`${stuck.title} needs attention: ${stuck.lastRunError}`);
    return now.every((t) => t.status === 'done');
  }, 'every task done');
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function runsOf(store: Store, tasks: Task[]): Promise<Run[]> {
  return (await Promise.all(tasks.map((t) => store.runs.list({ taskId: t.id })))).flat();
}

/** The most runs whose work overlapped: each from its start to its worker's last record. */
function mostAtOnce(runs: Run[]): number {
  const spans = runs.map((r): [number, number] => [r.startedAt, Math.max(...readOutbox(r.runDir!).records.map((rec) => rec.at))]);
  const edges = spans.flatMap(([from, to]) => [[from, 1], [to, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (now += step));
  return most;
}

describe('run slots', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /**
   * A daemon with these slots and tick (and these hooks), and a project whose stages follow SCRIPT, its gates
   * approved at once; `create` adds a task there.
   */
  async function slotsDaemon(o: { tickMs: number; maxConcurrentRuns: number }, hooks?: OrchestratorHooks) {
    const script = join(tempDir('maestro-slots-'), 'slots.yaml');
    writeFileSync(script, SCRIPT);
    const started = await startTestDaemon({ ...o, maxConcurrentRunsPerProject: 6, reservedConflictSlots: 0 }, hooks ? { hooks } : {});
    daemon = started;
    const { store } = started;
    const project = await store.projects.create({ name: 'slots', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const create = (title: string) => store.tasks.create({ projectId: project.id, title, complexity: 'easy', ownedFiles: [`out/${title}.txt`] });
    return { store, bus: started.bus, orchestrator: started.orchestrator, create };
  }

  it('never runs more stages at once than maxConcurrentRuns, the next stage of a claimed task included', async () => {
    const { store, bus, orchestrator, create } = await slotsDaemon({ tickMs: 50, maxConcurrentRuns: 2 });
    const tasks: Task[] = [];
    for (let i = 0; i < 8; i++) tasks.push(await create(`t${i}`));
    orchestrator.kick();
    await allDone(store, bus, tasks);

    const runs = await runsOf(store, tasks);
    expect(runs.map((r) => r.kind).sort()).toEqual([...Array(8).fill('execute'), ...Array(8).fill('review')]);
    expect(mostAtOnce(runs)).toBeLessThanOrEqual(2);
    // Two at once did happen: the limit is used, not just respected.
    expect(mostAtOnce(runs)).toBe(2);
  });

  it('with the tick timer ten minutes away, tasks still run to done: a creation ticks while a slot is free, and the end of a run ticks for a task created while its slot was busy', async () => {
    const { store, bus, orchestrator, create } = await slotsDaemon({ tickMs: 600_000, maxConcurrentRuns: 1 });
    orchestrator.kick();
    await orchestrator.idle(); // the start's ticks are over: from here only the tasks' own events tick
    // The slot is free: the first one's creation alone gets it claimed. The second is created while that one holds the slot.
    const tasks = [await create('first'), await create('second')];
    await allDone(store, bus, tasks);
    expect(mostAtOnce(await runsOf(store, tasks))).toBe(1);
  });

  it('a tick claims for its free slots while a run it claimed is still being started, and starts that run once', async () => {
    // The first task's run start is held (its before:execute hook waits) until the second task's start gets there.
    let release = () => {};
    let released = false;
    const held = new Promise<void>((r) => (release = () => ((released = true), r())));
    const starts: string[] = [];
    const reached = new Map(['first', 'second'].map((title) => [title, deferred()]));
    const beforeExecute = async (task: Task) => {
      starts.push(task.title);
      reached.get(task.title)?.resolve();
      if (task.title === 'first') await held;
    };
    const { store, bus, orchestrator, create } = await slotsDaemon({ tickMs: 600_000, maxConcurrentRuns: 2 }, { beforeExecute });
    orchestrator.kick();
    await orchestrator.idle();
    const first = await create('first');
    await reached.get('first')!.promise;
    const second = await create('second');
    // Were the tick waiting for the first start, the second would start only after the release (10 s later).
    const ends = setTimeout(release, 10_000);
    await reached.get('second')!.promise;
    expect(released).toBe(false);
    expect((await store.runs.list({ taskId: first.id })).length).toBe(0); // still being started
    clearTimeout(ends);
    release();
    await allDone(store, bus, [first, second]);
    expect(starts).toEqual(['first', 'second']);
    expect((await runsOf(store, [first])).map((r) => r.kind)).toEqual(['execute', 'review']);
  });

  it('a daemon restarted with fewer slots than the tasks it holds runs them one slot at a time', async () => {
    // Three tasks this daemon claimed before it stopped (it then allowed three runs at once).
    const home = tempDir('maestro-home-');
    const script = join(home, 'slots.yaml');
    writeFileSync(script, SCRIPT);
    const before = createStore(await openMigratedDatabase(`sqlite:${join(home, 'maestro.db')}`));
    const project = await before.projects.create({ name: 'slots', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const tasks: Task[] = [];
    for (let i = 0; i < 3; i++) {
      const task = await before.tasks.create({ projectId: project.id, title: `t${i}`, complexity: 'easy', ownedFiles: [`out/t${i}.txt`] });
      await before.tasks.claim(task.id, 'd-slots', 60_000);
      tasks.push(task);
    }
    await before.close();

    daemon = await startTestDaemon({ home, name: 'd-slots', tickMs: 50, maxConcurrentRuns: 1, maxConcurrentRunsPerProject: 6, reservedConflictSlots: 0 });
    await allDone(daemon.store, daemon.bus, tasks);
    const runs = await runsOf(daemon.store, tasks);
    expect(runs.map((r) => r.kind).sort()).toEqual([...Array(3).fill('execute'), ...Array(3).fill('review')]);
    expect(mostAtOnce(runs)).toBe(1);
  });
  it('a run waiting for a person\'s answer holds no slot: with one slot, another task runs to done meanwhile', async () => {
    const script = join(tempDir('maestro-slots-'), 'ask.yaml');
    writeFileSync(script, `steps:
  - match: { role: execute, title: asks }
    actions:
      - ask: "Tabs or spaces?"
      - write: { path: "out/asks.txt", content: "{{reply}}\\n" }
  - match: { role: execute }
    actions:
      - write: { path: "out/{{title}}.txt", content: "{{title}}\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`);
    daemon = await startTestDaemon({ tickMs: 50, maxConcurrentRuns: 1, maxConcurrentRunsPerProject: 2, reservedConflictSlots: 0 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'ask', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const asks = await store.tasks.create({ projectId: project.id, title: 'asks', complexity: 'easy', ownedFiles: ['out/asks.txt'] });
    daemon.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(asks.id)).status === 'awaiting_input', 'the question');
    const other = await store.tasks.create({ projectId: project.id, title: 'other', complexity: 'easy', ownedFiles: ['out/other.txt'] });
    await allDone(store, bus, [other]);
    expect((await store.tasks.get(asks.id)).status).toBe('awaiting_input');
  });
});
