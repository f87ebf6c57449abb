/**
 * A run's ledger stored in the database, imported into this host's session (a task taken over at review): the run's
 * folder, its ledger with the same candidate ids, sealed and reconciled, so the review sees it as a local run's.
 * A stored ledger that does not read is refused naming the run, and nothing is written; a second import writes
 * nothing and a candidate decided meanwhile stays decided.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { budget } from '../../../../test/helpers/budget.js';
import { project } from '../../../../test/helpers/knowledge2.js';
import { lockHolder } from '../../../../test/helpers/lockHolder.js';
import { createLifecycleContext } from '../context.js';
import { emptyLedger, MAX_LEDGER_BYTES, stageInto } from '../ledger/ledger.js';
import { promote } from '../promote/promote.js';
import { review } from '../reconcile/review.js';
import { importStoredRun, runHere, type StoredRun } from './importRun.js';
import { createSession, isSealed, readRun, runDir, sessionDir, storeLockTarget } from './store.js';

const lc = createLifecycleContext({ embedder: null });
const SID = 'task-t-0123456789ab';
const RID = 'r-0123456789abcdef';
const CONTENT = 'Greeting strings live in src/greet.ts and nowhere else.';

function ledgerText(over: Record<string, unknown> = {}): string {
  const now = '2026-12-07T10:00:00.000Z';
  const l = emptyLedger(SID, RID, now);
  stageInto(l, { target: 'spec', action: 'propose', title: CONTENT, content: CONTENT, category: 'arch', source_kind: 'decision', evidence_refs: [`run:${RID}`, 'report.md#decision:0'] }, now, 'test');
  return JSON.stringify({ ...l, ...over });
}

const stored = (ledger: string): StoredRun => ({ rid: RID, command: 'execute', goal: 'Greet', ledger, label: `the ledger of run r_0123456789abcdef stored in the database` });

describe('importStoredRun', () => {
  it('brings the run in: its folder, its ledger with the same ids, sealed and reconciled; the review lists its candidate', async () => {
    const p = project();
    expect(await importStoredRun(lc, p.root, SID, stored(ledgerText()), () => createSession(p.root, SID, 'Greet'))).toBe('imported');
    expect(isSealed(readRun(p.root, SID, RID))).toBe(true);
    const r = review(lc, p.root, SID);
    expect(r.candidates.map((c) => [c.source_run, c.content, c.status, c.receipt])).toEqual([[RID, CONTENT, 'pending', 'fresh']]);
    expect(readdirSync(join(sessionDir(p.root, SID), 'runs'))).toEqual([RID]);
  });

  it('once: a second import writes nothing, and a candidate promoted meanwhile stays promoted', async () => {
    const p = project();
    await importStoredRun(lc, p.root, SID, stored(ledgerText()), () => createSession(p.root, SID, 'Greet'));
    const [candidate] = review(lc, p.root, SID).candidates;
    expect(promote(lc, p.root, SID, { candidates: [candidate!.candidate_id] }).promoted).toHaveLength(1);
    const file = join(runDir(p.root, SID, RID), 'knowledge-delta.json');
    const before = readFileSync(file, 'utf8');
    expect(await importStoredRun(lc, p.root, SID, stored(ledgerText()), () => createSession(p.root, SID, 'Greet'))).toBe('here');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(JSON.parse(before).candidates[0].status).toBe('promoted');
  });

  it.each([
    ['a field the ledger schema refuses', ledgerText({ candidates: 'none' }), 'the ledger of run r_0123456789abcdef stored in the database: field candidates must be an array.'],
    ['text that is not JSON', '{"schema_version": ', 'the ledger of run r_0123456789abcdef stored in the database: not valid JSON ('],
    ['another run\'s ledger', ledgerText({ run_id: 'r-ffffffffffffffff' }), `the ledger of run r_0123456789abcdef stored in the database: it is the ledger of session ${SID} run r-ffffffffffffffff, not of session ${SID} run ${RID}; it was not imported.`],
    ['more than a ledger may be', ledgerText({ source_repository: 'x'.repeat(MAX_LEDGER_BYTES) }), `bytes, more than a ledger may be (${MAX_LEDGER_BYTES}); it was not imported.`],
  ])('refuses %s, naming the run; nothing is written', async (_what, ledger, message) => {
    const p = project();
    let ensured = false;
    await expect(importStoredRun(lc, p.root, SID, stored(ledger), () => (ensured = true))).rejects.toThrow(message);
    expect(ensured).toBe(false);
    expect(existsSync(sessionDir(p.root, SID))).toBe(false);
  });

  it('gives the event loop turns before it decides a large ledger (scored ahead in slices), and decides each candidate', async () => {
    const p = project();
    const now = '2026-12-07T10:00:00.000Z';
    const l = emptyLedger(SID, RID, now);
    for (let i = 0; i < 300; i++) {
      const content = `Module m${i} keeps its greeting strings in src/greet${i}.ts and reads them from nowhere else.`;
      stageInto(l, { target: 'spec', action: 'propose', title: content, content, category: 'arch', source_kind: 'decision', evidence_refs: [`run:${RID}`] }, now, 'test');
    }
    // What the daemon's loop does meanwhile: at each turn, whether the run was sealed (its candidates decided) yet.
    const sealedAtTurn: boolean[] = [];
    let importing = true;
    const turn = () => {
      sealedAtTurn.push(existsSync(join(runDir(p.root, SID, RID), 'run.json')) && isSealed(readRun(p.root, SID, RID)));
      if (importing) setImmediate(turn);
    };
    setImmediate(turn);
    const done = await importStoredRun(lc, p.root, SID, stored(JSON.stringify(l)), () => createSession(p.root, SID, 'Greet'));
    importing = false;
    expect(done).toBe('imported');
    // Before: reconciled at once, the loop's first turn came after the seal (the GET held the daemon throughout).
    expect(sealedAtTurn[0]).toBe(false);
    const r = review(lc, p.root, SID);
    expect(r.candidates).toHaveLength(300);
    expect(r.candidates.every((c) => c.receipt === 'fresh')).toBe(true);
  });

  it("seals an import stopped before its seal with the loop turning while another process holds the project's lock", { timeout: budget(60_000) }, async () => {
    const p = project();
    await importStoredRun(lc, p.root, SID, stored(ledgerText()), () => createSession(p.root, SID, 'Greet'));
    // As an import stopped between its rename and its seal leaves it: completed, not sealed.
    const file = join(runDir(p.root, SID, RID), 'run.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), status: 'completed', sealed_at: null }));
    const other = await lockHolder(['hold', storeLockTarget(p.root)]); // a person's `maestro knowledge …`
    let turns = 0;
    let turned!: () => void;
    const tenTurns = new Promise<'turning'>((resolve) => (turned = () => resolve('turning')));
    const timer = setInterval(() => ++turns === 10 && turned(), 5);
    try {
      const here = runHere(lc, p.root, SID, RID);
      // A seal that waited with its thread blocked gives up (LOCK_TIMEOUT) before the loop turns again.
      expect(await Promise.race([tenTurns, here.then((h) => ({ settled: h }), (err: Error) => ({ settled: err.message }))])).toBe('turning');
      expect(isSealed(readRun(p.root, SID, RID))).toBe(false);
      await other.release();
      expect(await here).toBe(true);
      expect(isSealed(readRun(p.root, SID, RID))).toBe(true);
    } finally {
      clearInterval(timer);
      await other.release();
    }
  });
});
