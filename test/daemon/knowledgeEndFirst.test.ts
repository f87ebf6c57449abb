/**
 * A task's next run starts only once its previous run's knowledge end has settled (src/daemon/knowledgeEnds.ts).
 * The end of one task's execute is held here (its onRunFinished awaits a gate the test opens): its review waits,
 * another task runs through meanwhile, and a stop ends the wait. The first task's project is a demo's, whose run
 * end promotes the execute's accepted decision (runAftermath.ts autoPromoteDecisions): once the end is over, the
 * review's brief cites the decision and counts no pending candidate. Without the wait the review started while the
 * end was held, and its brief counted the decision as a pending candidate and cited nothing. (Without a promotion
 * the count is the same either way: an unsealed run's report counts as draft candidates, review.ts.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import type { Task } from '../../src/core/types.js';
import { Orchestrator } from '../../src/daemon/orchestrator.js';
import { KnowledgeBridge, type BridgeRunInfo } from '../../src/knowledge/lifecycle/bridge.js';
import { Bus } from '../../src/lib/bus.js';
import { createStore, type Store } from '../../src/store/store.js';
import { budget } from '../helpers/budget.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';
import { reportingScript } from '../helpers/reportScript.js';
import { poll } from '../helpers/wait.js';

const DECISION = 'Greet callers from a.txt only.';
const SCRIPT = reportingScript({ writes: [{ path: 'a.txt', content: 'hello\n' }], summary: 'greeting placed', decisions: [DECISION] });
const WAITS = "waits to start until its previous run's knowledge is finished";
const STOP_WAITS = "waiting for finished runs' knowledge to be stored";

/** A bridge whose end of the execute run of the task titled `gated` waits for `open()` before it stages the run's report. */
class GatedBridge extends KnowledgeBridge {
  readonly gated = 'Greet first';
  entered = false;
  private release!: () => void;
  private readonly gate = new Promise<void>((r) => (this.release = r));

  open(): void {
    this.release();
  }

  override async onRunFinished(info: BridgeRunInfo, opts?: { autoPromoteDecisions?: boolean }) {
    if (info.task.title === this.gated && info.run.kind === 'execute') {
      this.entered = true;
      await this.gate;
    }
    return super.onRunFinished(info, opts);
  }
}

interface Setup {
  store: Store;
  /** Stops the orchestrator (once, however often it is called). */
  stop: () => Promise<void>;
  bridge: GatedBridge;
  logs: string[];
  task: (name: string) => Promise<Task>;
}

describe("a run waits for its task's previous run's knowledge", () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    removeTempDirs();
  });

  async function setup(): Promise<Setup> {
    const { db } = await freshSqlite();
    const store = createStore(db);
    cleanups.push(() => store.close());
    const home = tempDir('maestro-knowledge-end-');
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const bridge = new GatedBridge({ env: { MAESTRO_HOME: home } });
    const logs: string[] = [];
    const config = { ...resolveConfig({ home }, {}), name: 'd1', tickMs: 100, maxConcurrentRuns: 4 };
    const errors: Error[] = [];
    const orchestrator = new Orchestrator(store, new Bus(), config, {
      env: process.env,
      onChange: () => {},
      onError: (e) => errors.push(e),
      log: { info: (obj, msg) => logs.push(`${msg} ${JSON.stringify(obj)}`) },
      knowledge: bridge,
      knowledgeEndSlowMs: 1,
    });
    await orchestrator.register();
    orchestrator.start();
    let stopping: Promise<void> | null = null;
    const stop = () => (stopping ??= orchestrator.stop({ graceMs: 0 }));
    cleanups.push(async () => {
      await stop();
      expect(errors.map((e) => e.message)).toEqual([]);
    });
    // First at the end: a test that failed with the end held must not hold the stop.
    cleanups.push(() => bridge.open());
    // A project each: their tasks write the same file. The first's is a demo's: its runs' decisions are promoted as they end.
    const task = async (name: string) => {
      const project = await store.projects.create({ name, repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, demo: name === 'first' } });
      return store.tasks.create({ projectId: project.id, title: `Greet ${name}`, complexity: 'easy', ownedFiles: ['a.txt'] });
    };
    return { store, stop, bridge, logs, task };
  }

  const reviewsStarted = async (store: Store, taskId: string) => (await store.events.list({ taskId, type: 'run.started' })).events.filter((e) => e.payload.kind === 'review').length;
  const atGate = (store: Store, taskId: string, what: string) =>
    poll(async () => {
      const t = await store.tasks.get(taskId);
      if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
      return t.status === 'exec_review' ? t : null;
    }, what, 120_000);

  it("starts the review after the execute's knowledge is finished (its brief cites the decision promoted), and holds no other task back", { timeout: budget(300_000) }, async () => {
    const { store, bridge, logs, task } = await setup();
    const first = await task('first');
    await poll(() => bridge.entered, "the first task's execute at its knowledge end", 120_000);

    // The other task goes through execute and review while the first one's end is held.
    const second = await task('second');
    await atGate(store, second.id, 'the second task at its gate while the first one waits');
    const waiting = await store.tasks.get(first.id);
    expect(waiting).toMatchObject({ status: 'reviewing', claimedBy: 'd1' });
    expect(await reviewsStarted(store, first.id), 'a review of the first task started while its execute was finishing its knowledge').toBe(0);
    expect(logs.filter((l) => l.includes(WAITS) && l.includes(first.id))).toHaveLength(1);

    bridge.open();
    await atGate(store, first.id, 'the first task reviewed once its execute finished its knowledge');
    const review = (await store.runs.list({ taskId: first.id })).find((r) => r.kind === 'review')!;
    const job = JSON.parse(readFileSync(join(review.runDir!, 'job.json'), 'utf8')) as { project: { knowledge: string } };
    expect(job.project.knowledge).toContain('0 pending candidate(s)');
    expect(job.project.knowledge).toContain(`] ${DECISION}`);
  });

  it('a stop ends the wait: the review never starts and the task is let go at its stage', { timeout: budget(300_000) }, async () => {
    const { store, stop: stopNow, bridge, logs, task } = await setup();
    const first = await task('first');
    await poll(() => logs.some((l) => l.includes(WAITS) && l.includes(first.id)), 'the review waiting for the execute\'s knowledge', 120_000);

    let stopped = false;
    const stop = stopNow().finally(() => (stopped = true));
    // Past the starts (idle), at the Ingestor's wait for the ends, with the end still held.
    await poll(() => stopped || logs.some((l) => l.includes(STOP_WAITS)), 'the stop past the starts, waiting for the knowledge end', 60_000);
    expect(stopped).toBe(false);
    bridge.open();
    await stop;
    expect(await reviewsStarted(store, first.id)).toBe(0);
    expect(await store.tasks.get(first.id)).toMatchObject({ status: 'reviewing' });
    const released = (await store.events.list({ taskId: first.id, type: 'task.released' })).events;
    expect(released.map((e) => e.payload)).toEqual([expect.objectContaining({ owner: 'd1', status: 'reviewing' })]);
  });
});
