/**
 * A stopping daemon lets its tasks go only once what their runs proposed is stored in the database: the run's
 * sealed knowledge ledger (runAftermath.ts knowledgeFinished) is what a daemon taking the task over imports at the
 * gate, and a run whose ledger is missing is named there as one whose candidates cannot come. The Ingestor keeps
 * what each run's onFinal goes on doing and its stop waits for it (commit 4ece3806); this test fails without that.
 *
 * Whatever the timing: the storing of the execute's ledger is held (through the daemon's own store) until the stop
 * says it waits for it, or the stop is over. With the wait, the stop says so, the ledger is stored, and only then
 * is the task let go. Without it, nothing says so, the stop lets the task go and closes the store, and the ledger
 * comes too late to be stored. The daemon stops while the execute is in its agent stage; the stage finishes in the
 * grace period and the run succeeds. Read after the stop: the task is let go (no claim) and the run's ledger, its
 * three candidates, is in the database.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/store/store.js';
import { openSqlite } from '../../src/store/sqlite.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { reportingScript } from '../helpers/reportScript.js';

const DECISIONS = 3;
const decision = (i: number) => `Module m${i} greets from src/g${i}.ts only.`;
const SCRIPT = reportingScript({ wait: 2000, writes: [{ path: 'a.txt', content: 'hello\n' }], summary: 'greetings placed', decisions: Array.from({ length: DECISIONS }, (_, i) => decision(i)) });
const WAITING = "waiting for finished runs' knowledge to be stored";

describe('a stopping daemon and its runs\' knowledge', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 0 });
    daemon = null;
    removeTempDirs();
  });

  it("lets its task go only once the run's knowledge ledger is stored in the database", { timeout: budget(300_000) }, async () => {
    const repo = makeRepo({ 'README.md': '# test\n' });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = await startTestDaemon({ tickMs: 100 });
    daemon = d;
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy', ownedFiles: ['a.txt'] });
    // The ledger's storing, held until the stop says it waits for it (or the stop is over without having waited).
    let stopped = false;
    let held = false;
    const storeKnowledge = d.store.runs.storeKnowledge;
    d.store.runs.storeKnowledge = async (runId, ledger) => {
      held = true;
      await poll(() => stopped || d.logs.some((l) => l.includes(WAITING)), 'the stop to wait for the ledger, or to end', budget(120_000));
      return storeKnowledge(runId, ledger);
    };
    d.orchestrator.kick();
    await until(d.bus, async () => (await d.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), 'the execute in its agent stage', budget(120_000));
    // Stopped mid-stage: the stage finishes in the grace period, its run succeeds, the task is let go at review.
    daemon = null;
    await d.stop({ graceMs: 60_000 }).finally(() => (stopped = true));
    expect(held, "the execute's ledger went to be stored during the stop").toBe(true);

    const store = createStore(openSqlite(join(d.config.home, 'maestro.db')));
    try {
      const [execute] = await store.runs.list({ taskId: task.id });
      expect(execute).toMatchObject({ kind: 'execute', status: 'succeeded' });
      const released = (await store.events.list({ taskId: task.id, type: 'task.released' })).events;
      expect(released.map((e) => e.payload)).toEqual([expect.objectContaining({ status: 'reviewing' })]);
      const stored = (await store.runs.knowledgeOf([execute!.id])).get(execute!.id);
      expect(stored, 'the execute run\'s ledger stored before the stop let the task go').toEqual(expect.any(String));
      const ledger = JSON.parse(stored!) as { candidates: Array<{ content: string }> };
      expect(ledger.candidates.map((c) => c.content).sort()).toEqual(Array.from({ length: DECISIONS }, (_, i) => decision(i)).sort());
    } finally {
      await store.close();
    }
  });
});
