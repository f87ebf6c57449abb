/**
 * At a task's gate, the runs of it on another daemon whose candidates this daemon could not import are named in
 * the task's detail (knowledgeElsewhere), and only those: one whose ledger was stored is imported into this
 * daemon's session and its candidate is reviewed here; one that staged nothing is not named; one that finished
 * before ledgers were stored (no row) is named with no error; one whose stored ledger does not read is named with
 * why, and nothing of it is imported. Looked at again, the gate reads no stored ledger of a run already imported.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sessionIdFor, runIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { emptyLedger, stageInto } from '../../src/knowledge/lifecycle/ledger/ledger.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { removeTempDirs } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';

const CONTENT = 'Greeting strings live in src/greet.ts and nowhere else.';

describe("a task's runs on another daemon, at its gate", () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 0 });
    d = null;
    removeTempDirs();
  });

  it('imports the stored ledgers and names only the runs whose candidates could not come, with why', async () => {
    d = await startTestDaemon({ name: 'here' }, { noOrchestrator: true });
    const { store } = d;
    const project = await store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script: '/nonexistent.yaml' } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy' });
    const sid = sessionIdFor(task.id);
    const finished = async (kind: 'plan' | 'execute') => {
      const run = await store.runs.create({ taskId: task.id, kind, model: null, traceId: 'tr', attempt: 1, owner: 'there' });
      return store.runs.finish({ id: run.id, status: 'succeeded' });
    };
    const stored = await finished('plan');
    const now = new Date().toISOString();
    const ledger = emptyLedger(sid, runIdFor(stored.id), now);
    stageInto(ledger, { target: 'spec', action: 'propose', title: CONTENT, content: CONTENT, category: 'arch', source_kind: 'decision', evidence_refs: [`run:${runIdFor(stored.id)}`] }, now, 'test');
    await store.runs.storeKnowledge(stored.id, JSON.stringify(ledger));
    const nothing = await finished('execute');
    await store.runs.storeKnowledge(nothing.id, null);
    const old = await finished('execute');
    const bad = await finished('execute');
    await store.runs.storeKnowledge(bad.id, JSON.stringify({ ...ledger, run_id: runIdFor(bad.id), candidates: 'none' }));

    const detail = async () => (await d!.app.inject({ method: 'GET', url: `/api/tasks/${task.id}` })).json() as { knowledgeElsewhere: Array<{ runId: string; error: string | null }> };
    // Before the gate nothing is imported, and nothing is named.
    expect((await detail()).knowledgeElsewhere).toEqual([]);
    for (const st of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await store.tasks.transition(task.id, st);
    const named = (await detail()).knowledgeElsewhere;
    // Runs started in one millisecond are listed by id: compared as a set.
    const byRun = (rows: Array<[string, string | null]>) => [...rows].sort((x, y) => x[0].localeCompare(y[0]));
    expect(byRun(named.map((r) => [r.runId, r.error]))).toEqual(byRun([
      [old.id, null],
      [bad.id, `the ledger of run ${bad.id} stored in the database: field candidates must be an array.`],
    ]));
    const review = (await d.app.inject({ method: 'GET', url: `/api/knowledge/review/${sid}?projectId=${project.id}` })).json() as { candidates: Array<{ source_run: string; content: string; status: string }> };
    expect(review.candidates.map((c) => [c.source_run, c.content, c.status])).toEqual([[runIdFor(stored.id), CONTENT, 'pending']]);

    // Looked at again, the gate reads no ledger of a run already here (a stored ledger may be 4 MB): the store's
    // knowledgeOf is counted through the daemon's own store. Only the refused ledger is read again, to say why.
    const read: string[] = [];
    const knowledgeOf = store.runs.knowledgeOf;
    store.runs.knowledgeOf = async (ids) => {
      const rows = await knowledgeOf(ids);
      for (const [id, ledger] of rows) if (ledger !== null) read.push(id);
      return rows;
    };
    expect(byRun((await detail()).knowledgeElsewhere.map((r) => [r.runId, r.error]))).toEqual(byRun(named.map((r) => [r.runId, r.error])));
    const again = (await d.app.inject({ method: 'GET', url: `/api/knowledge/review/${sid}?projectId=${project.id}` })).json() as typeof review;
    expect(again.candidates.map((c) => [c.source_run, c.content, c.status])).toEqual([[runIdFor(stored.id), CONTENT, 'pending']]);
    expect(read).toEqual([bad.id, bad.id]);
  });
});
