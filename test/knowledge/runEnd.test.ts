/**
 * A run's end written while other processes write the same files: the daemon seals a run (its receipt, run.json,
 * session.json, with their fsyncs off the event loop) while a person's `maestro knowledge review --refresh`
 * rewrites the run's receipt, or another process registers a run in the same session. Each holds the file's lock
 * from its read to its rename (session/ops.ts completeAndSeal, reconcile/receipt.ts reconcileSource), so no one's
 * fixed temporary file is another's and no update is lost.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../helpers/knowledge2.js';
import { budget } from '../helpers/budget.js';
import { lockHolder } from '../helpers/lockHolder.js';
import { scriptArgs } from '../helpers/script.js';
import { KnowledgeBridge, runIdFor, sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { readLedger } from '../../src/knowledge/lifecycle/ledger/ledger.js';
import { readReceipt, readSourceState, runSource, sessionSource } from '../../src/knowledge/lifecycle/reconcile/receipt.js';
import { resolveCandidate } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { finishRunOffLoop, sealSession, stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession, isSealed, listRunIds, readRun, readSession, runDir, sessionDir } from '../../src/knowledge/lifecycle/session/store.js';

const WORKER = join(import.meta.dirname, 'runEndWorker.ts');
const lc = createLifecycleContext({ embedder: null });

/**
 * The worker in a child process: resolves once it has done its first round; `stop` ends it once it has done `min`
 * rounds, and gives its exit code and stderr.
 */
async function startWorker(dir: string, args: string[], min = 1): Promise<{ stop: () => Promise<{ code: number | null; stderr: string }> }> {
  const stopFile = join(dir, 'stop-worker');
  const child = spawn(process.execPath, [...scriptArgs(WORKER), args[0]!, dir, stopFile, String(min), ...args.slice(1)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  const started = new Promise<boolean>((resolve) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('STARTED\n')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!(await started)) throw new Error(`the worker ended before its first round: ${(await exited).stderr}`);
  return {
    stop: () => {
      writeFileSync(stopFile, '');
      return exited;
    },
  };
}

/** Files whose name ends in .tmp anywhere under `dir` (following the run folders' links). */
function tempFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tmp'));
}

const RUNS = 12;

describe('a run end and another process writing the same files', { timeout: budget(240_000) }, () => {
  it('the daemon seals runs while another process refreshes their receipts: every receipt parses, no temporary file is left, neither fails', async () => {
    const p = project();
    createSession(p.root, 's-1');
    const rids = Array.from({ length: RUNS }, (_, i) => `run-${i}`);
    for (const rid of rids) {
      createRun(p.root, 's-1', { runId: rid, linkTo: join(p.dir, '.home', 'runs', rid) });
      stage(p.root, { target: 'spec', title: `Rule of ${rid}`, content: `Every module of ${rid} keeps its errors in one catalogue.`, run: rid, session: 's-1' }, {});
    }
    const worker = await startWorker(p.dir, ['refresh', 's-1', ...rids]);
    const failures: string[] = [];
    for (const rid of rids) await finishRunOffLoop(lc, p.root, 's-1', rid).catch((err: Error) => failures.push(`${rid}: ${err.message}`));
    const { code, stderr } = await worker.stop();
    expect({ failures, code, stderr }).toEqual({ failures: [], code: 0, stderr: '' });
    for (const rid of rids) {
      expect(isSealed(readRun(p.root, 's-1', rid))).toBe(true);
      expect(readReceipt(runSource(p.root, 's-1', rid))).toMatchObject({ session_id: 's-1', run_id: rid, counts: { candidates: 1 } });
    }
    expect(tempFiles(sessionDir(p.root, 's-1'))).toEqual([]);
    expect(readSession(p.root, 's-1').active_run_ids).toEqual([]);
  });

  it('two processes refresh the same receipt, many times at once: neither fails, the receipt parses, no temporary file is left', async () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    stage(p.root, { target: 'spec', title: 'One rule', content: 'Every module keeps its errors in one catalogue.', run: 'run-1', session: 's-1' }, {});
    // Both started before either is told to stop, and each goes on for 150 refreshes: most of them at the same time.
    const workers = await Promise.all([1, 2].map(() => startWorker(p.dir, ['refresh', 's-1', 'run-1'], 150)));
    const ends = await Promise.all(workers.map((w) => w.stop()));
    expect(ends).toEqual([{ code: 0, stderr: '' }, { code: 0, stderr: '' }]);
    expect(readReceipt(runSource(p.root, 's-1', 'run-1'))).toMatchObject({ session_id: 's-1', run_id: 'run-1', counts: { candidates: 1 } });
    expect(tempFiles(sessionDir(p.root, 's-1'))).toEqual([]);
  });

  it('a resolution while another process refreshes the receipt is kept: the refresh carries it over, neither fails', async () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    const { candidate } = stage(p.root, { target: 'spec', title: 'One rule', content: 'Every module keeps its errors in one catalogue.', run: 'run-1', session: 's-1' }, {});
    const worker = await startWorker(p.dir, ['refresh', 's-1', 'run-1']);
    const failures: string[] = [];
    let reason = '';
    for (let i = 0; i < 40; i++) {
      reason = `checked by hand, pass ${i}`;
      try {
        resolveCandidate(lc, p.root, 's-1', { candidate: candidate.candidate_id, as: 'unique', reason });
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    const { code, stderr } = await worker.stop();
    expect({ failures, code, stderr }).toEqual({ failures: [], code: 0, stderr: '' });
    const receipt = readReceipt(runSource(p.root, 's-1', 'run-1'))!;
    expect(receipt.candidates.find((c) => c.candidate_id === candidate.candidate_id)?.resolution).toMatchObject({ status: 'confirmed', reason });
    expect(tempFiles(sessionDir(p.root, 's-1'))).toEqual([]);
  });

  it('candidates staged by another process while the daemon seals the run: each is in the sealed ledger and its receipt, or refused', async () => {
    const p = project();
    createSession(p.root, 's-1');
    const rids = Array.from({ length: RUNS }, (_, i) => `run-${i}`);
    for (const rid of rids) createRun(p.root, 's-1', { runId: rid, linkTo: join(p.dir, '.home', 'runs', rid) });
    const worker = await startWorker(p.dir, ['stage', 's-1', ...rids]);
    const failures: string[] = [];
    for (const rid of rids) await finishRunOffLoop(lc, p.root, 's-1', rid).catch((err: Error) => failures.push(`${rid}: ${err.message}`));
    const { code, stderr } = await worker.stop();
    expect({ failures, code, stderr }).toEqual({ failures: [], code: 0, stderr: '' });
    for (const rid of rids) {
      const src = runSource(p.root, 's-1', rid);
      // The receipt made at the seal covers exactly the candidates the sealed ledger holds.
      const covered = readReceipt(src)!.candidates.map((c) => c.candidate_id);
      expect(covered).toEqual((readLedger(src.ledgerPath)?.candidates ?? []).map((c) => c.candidate_id).sort());
      expect(readReceipt(src)!.candidate_snapshot_hash).toBe(readSourceState(src).snapshotHash);
    }
  });

  it("an agent's loads recorded while the daemon seals its run: none lands in the ledger after the seal", async () => {
    const p = project();
    createSession(p.root, 's-1');
    const rids = Array.from({ length: RUNS }, (_, i) => `run-${i}`);
    for (const rid of rids) createRun(p.root, 's-1', { runId: rid, linkTo: join(p.dir, '.home', 'runs', rid) });
    const worker = await startWorker(p.dir, ['load', 's-1', ...rids]);
    const ledgerOf = (rid: string) => readLedger(runSource(p.root, 's-1', rid).ledgerPath);
    const atSeal = new Map<string, ReturnType<typeof ledgerOf>>();
    for (const rid of rids) {
      await finishRunOffLoop(lc, p.root, 's-1', rid);
      atSeal.set(rid, ledgerOf(rid));
    }
    const { code, stderr } = await worker.stop();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    for (const rid of rids) expect(ledgerOf(rid)).toEqual(atSeal.get(rid));
    expect(atSeal.get('run-0')?.inputs.length).toBeGreaterThan(0); // the worker's first load, before any seal
  });

  it("candidates staged into a session's ledger by another process while the session is sealed: none lands after the seal", async () => {
    const p = project();
    const sids = Array.from({ length: RUNS }, (_, i) => `s-${i}`);
    for (const sid of sids) createSession(p.root, sid);
    const worker = await startWorker(p.dir, ['stage-session', ...sids]);
    const ledgerOf = (sid: string) => readLedger(sessionSource(p.root, sid).ledgerPath);
    const atSeal = new Map<string, ReturnType<typeof ledgerOf>>();
    for (const sid of sids) {
      sealSession(lc, p.root, sid);
      atSeal.set(sid, ledgerOf(sid));
    }
    const { code, stderr } = await worker.stop();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    for (const sid of sids) expect(ledgerOf(sid)).toEqual(atSeal.get(sid));
    expect(sids.some((sid) => atSeal.get(sid)?.candidates.length)).toBe(true); // the worker did stage into sessions before their seal
  });

  it('the daemon ends runs while another process registers runs in the same session: session.json keeps both', async () => {
    const p = project();
    createSession(p.root, 's-1');
    const worker = await startWorker(p.dir, ['create-runs', 's-1']);
    const failures: string[] = [];
    for (let i = 0; i < 3 * RUNS; i++) {
      const rid = `d-${i}`;
      createRun(p.root, 's-1', { runId: rid, linkTo: join(p.dir, '.home', 'runs', rid) });
      await finishRunOffLoop(lc, p.root, 's-1', rid).catch((err: Error) => failures.push(`${rid}: ${err.message}`));
    }
    const { code, stderr } = await worker.stop();
    expect({ failures, code, stderr }).toEqual({ failures: [], code: 0, stderr: '' });
    const theirs = listRunIds(p.root, 's-1').filter((rid) => rid.startsWith('c-'));
    const s = readSession(p.root, 's-1');
    // Each run registered is active until sealed; each registration and each seal counts once.
    expect([...s.active_run_ids].sort()).toEqual(theirs);
    expect(s.activity_revision).toBe(2 * 3 * RUNS + theirs.length);
    expect(tempFiles(sessionDir(p.root, 's-1'))).toEqual([]);
    expect(JSON.parse(readFileSync(join(runDir(p.root, 's-1', 'd-0'), 'run.json'), 'utf8')).status).toBe('sealed');
  });

  it('a run another process seals while the daemon waits for its locks is "nothing to finish": null, no error', async () => {
    const p = project();
    const bridge = new KnowledgeBridge({ env: { MAESTRO_HOME: p.root.home } });
    const task = { id: 'T1', title: 'Add greeting' };
    const dir = join(p.root.home, 'runs', 'T1', 'r-1');
    mkdirSync(dir, { recursive: true });
    const info = { task, run: { id: 'r-1', kind: 'execute' }, runDir: dir, repoPath: p.dir };
    await bridge.onRunStarted(info);
    writeFileSync(join(dir, 'report.md'), '---\nverdict: ready\nsummary: greeting added\ndecisions:\n  - accepted: "Greeting strings live in src/greet.ts."\n---\n');
    const [sid, rid] = [sessionIdFor(task.id), runIdFor('r-1')];
    // `maestro run seal` in another process, holding the run end's locks: the daemon's end of the run finds the run
    // unsealed, then waits for them; the other process seals the run and lets go.
    const other = await lockHolder(['seal-run', p.dir, sid, rid]);
    const finished = bridge.onRunFinished(info);
    expect(isSealed(readRun(p.root, sid, rid))).toBe(false);
    expect(await other.release()).toMatchObject({ code: 0, stderr: '' });
    expect(await finished).toBeNull();
    const run = readRun(p.root, sid, rid);
    expect(run).toMatchObject({ status: 'sealed', verdict: 'done', summary: 'greeting added' }); // as the other process sealed it
    expect(readReceipt(runSource(p.root, sid, rid))).toMatchObject({ run_id: rid, counts: { candidates: 1 } });
    expect(readSession(p.root, sid).active_run_ids).toEqual([]);
  });
});
