/**
 * The daemon's run start and end (createRunOffLoop, finishRunOffLoop): the same files as createRun and finishRun,
 * written with their fsyncs off the event loop, so the loop turns between their writes; and neither loses a change
 * this process made to the session meanwhile.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../../../../test/helpers/knowledge2.js';
import { createLifecycleContext } from '../context.js';
import { readLedger } from '../ledger/ledger.js';
import { finishRun, finishRunOffLoop } from './ops.js';
import { createRun, createRunOffLoop, createSession, runDir, sessionsDir } from './store.js';

const REPORT = '---\nverdict: ready\nsummary: greeting added\ndecisions:\n  - accepted: "Greeting strings live in src/greet.ts."\n---\n';

/** A project with session s-1 and its run run-1, the agent's report written. */
function finishedRun() {
  const p = project();
  createSession(p.root, 's-1', 'Add greeting');
  createRun(p.root, 's-1', { runId: 'run-1' });
  writeFileSync(join(runDir(p.root, 's-1', 'run-1'), 'report.md'), REPORT);
  return p;
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
/** A file's JSON without the times and hashes that differ between two runs of the same end. */
const timeless = (file: string) => JSON.stringify(json(file), (k, v: unknown) => (/_at$|^corpus_fingerprint$/.test(k) ? '' : v));

/** Counts the event loop's turns (check phases) until stop() is called. */
function turns() {
  let n = 0;
  let on = true;
  const turn = () => {
    if (!on) return;
    n++;
    setImmediate(turn);
  };
  setImmediate(turn);
  return { stop: () => ((on = false), n) };
}

describe('finishRunOffLoop', () => {
  it('lets the event loop turn before each of its renames, and leaves the files finishRun leaves', async () => {
    const a = finishedRun();
    const b = finishedRun();
    finishRun(createLifecycleContext({ embedder: null }), a.root, 's-1', 'run-1');
    await stat(b.dir); // from an I/O callback's turn: the loop's next phase is its check phase
    const loop = turns();
    const done = finishRunOffLoop(createLifecycleContext({ embedder: null }), b.root, 's-1', 'run-1');
    const receipt = join(runDir(b.root, 's-1', 'run-1'), 'knowledge-reconciliation.json');
    expect(existsSync(receipt)).toBe(false); // staged, its fsync in the threadpool: not renamed yet
    const result = await done;
    // The receipt, run.json and session.json: each awaited a file fsync and a folder fsync, a turn between them.
    expect(loop.stop()).toBeGreaterThanOrEqual(3);
    expect(result?.run.status).toBe('sealed');
    for (const file of ['runs/run-1/run.json', 'runs/run-1/knowledge-reconciliation.json', 'runs/run-1/knowledge-delta.json', 'session.json']) {
      expect(timeless(join(sessionsDir(b.root), 's-1', file))).toBe(timeless(join(sessionsDir(a.root), 's-1', file)));
    }
    expect(json(join(sessionsDir(b.root), 's-1', 'session.json')).active_run_ids).toEqual([]);
  });

  it('a session write in flight is finished before the session is read again: a run started meanwhile stays active', async () => {
    const p = finishedRun();
    const session = join(sessionsDir(p.root), 's-1', 'session.json');
    let started = false;
    let finished = false;
    // Each turn of the loop: once the run end's session.json is staged (its fixed temporary file is there), the next run starts.
    const watch = () => {
      if (!started && existsSync(`${session}.tmp`)) {
        createRun(p.root, 's-1', { runId: 'run-2' });
        started = true;
      }
      if (!started && !finished) setImmediate(watch);
    };
    setImmediate(watch);
    await finishRunOffLoop(createLifecycleContext({ embedder: null }), p.root, 's-1', 'run-1').finally(() => (finished = true));
    expect(started).toBe(true);
    expect(json(session).active_run_ids).toEqual(['run-2']);
    expect(json(join(runDir(p.root, 's-1', 'run-1'), 'run.json')).status).toBe('sealed');
    expect(json(join(runDir(p.root, 's-1', 'run-2'), 'run.json')).status).toBe('running');
  });

  it("writes the run's ledger off the loop too (the report staged, then an exact duplicate suppressed), and a read of it meanwhile gets the new one", async () => {
    const p = project();
    createSession(p.root, 's-1', 'Add greeting');
    createRun(p.root, 's-1', { runId: 'run-1' });
    // The locked constraint is word for word the project's spec entry (test/helpers/knowledge2.ts SPEC_FILE): an exact duplicate, suppressed at the seal.
    const report = `${REPORT.slice(0, -4)}constraints:\n  - text: "Every error thrown to a user must carry a stable error code and say what and where."\n    status: locked\n---\n`;
    writeFileSync(join(runDir(p.root, 's-1', 'run-1'), 'report.md'), report);
    const ledger = join(runDir(p.root, 's-1', 'run-1'), 'knowledge-delta.json');
    const seen: string[][] = [];
    let finished = false;
    // Each turn of the loop while a write of the ledger is in flight (its fixed temporary file there): what a reader here gets.
    const watch = () => {
      if (existsSync(`${ledger}.tmp`)) seen.push((readLedger(ledger)?.candidates ?? []).map((c) => `${c.source_kind} ${c.status}`));
      if (!finished) setImmediate(watch);
    };
    await stat(p.dir);
    setImmediate(watch);
    await finishRunOffLoop(createLifecycleContext({ embedder: null }), p.root, 's-1', 'run-1').finally(() => (finished = true));
    expect(seen).toEqual([
      ['decision pending', 'constraint pending'],
      ['decision pending', 'constraint rejected'],
    ]);
    expect(readLedger(ledger)?.candidates.map((c) => c.status)).toEqual(['pending', 'rejected']);
  });
});

describe('createRunOffLoop', () => {
  it('lets the event loop turn before each of its renames, and leaves the files createRun leaves', async () => {
    const a = project();
    const b = project();
    for (const p of [a, b]) createSession(p.root, 's-1', 'Add greeting');
    createRun(a.root, 's-1', { runId: 'run-1', command: 'execute' });
    await stat(b.dir);
    const loop = turns();
    const done = createRunOffLoop(b.root, 's-1', { runId: 'run-1', command: 'execute' });
    expect(existsSync(join(runDir(b.root, 's-1', 'run-1'), 'run.json'))).toBe(false); // staged, not renamed yet
    expect((await done).created).toBe(true);
    expect(loop.stop()).toBeGreaterThanOrEqual(2); // run.json, then session.json
    for (const file of ['runs/run-1/run.json', 'session.json']) {
      expect(timeless(join(sessionsDir(b.root), 's-1', file))).toBe(timeless(join(sessionsDir(a.root), 's-1', file)));
    }
    const report = (p: typeof a) => readFileSync(join(runDir(p.root, 's-1', 'run-1'), 'report.md'), 'utf8');
    expect(report(b)).toBe(report(a));
    expect((await createRunOffLoop(b.root, 's-1', { runId: 'run-1' })).created).toBe(false);
  });

  it("keeps a change this process made to the session while run.json was syncing: another run's end", async () => {
    const p = finishedRun();
    const started = createRunOffLoop(p.root, 's-1', { runId: 'run-2' }); // read the session, run.json in flight
    finishRun(createLifecycleContext({ embedder: null }), p.root, 's-1', 'run-1'); // takes run-1 off the session
    await started;
    expect(json(join(sessionsDir(p.root), 's-1', 'session.json')).active_run_ids).toEqual(['run-2']);
  });
});
