/**
 * Scoring ahead (scoreAhead.ts): a reconcile after it writes the receipt the synchronous path writes, and the
 * event loop keeps turning while it scores. A refresh scores before it takes the project's lock (receipt.ts scoreBeforeLock).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../../../../test/helpers/knowledge2.js';
import { createLifecycleContext } from '../context.js';
import { candidateId } from '../ledger/recipes.js';
import { RUN_LEDGER, type LedgerCandidate } from '../ledger/ledger.js';
import { createRun, createSession } from '../session/store.js';
import { stage } from '../session/ops.js';
import { acquireKernelLock } from '../../../lib/kernelLock.js';
import { namespaceLockPath } from '../../format/lock.js';
import { reconcileSource, runSource } from './receipt.js';
import { scoreSessionAhead } from './scoreAhead.js';
import { prepareCorpus, type PreparedCorpus } from './prepared.js';

// A project-like vocabulary (as bench:knowledge's): candidates share words and trigrams with many documents, not all.
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const WORDS = Array.from({ length: 800 }, () => Array.from({ length: 3 + Math.floor(rnd() * 6) }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join(''));
const pick = () => WORDS[Math.min(WORDS.length - 1, Math.floor(Math.pow(WORDS.length, rnd())) - 1)]!;
const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');
const modal = () => ['must', 'should', 'must not', 'never', 'may'][Math.floor(rnd() * 5)]!;

/** 1,200 spec entries; a run with 120 candidates: exact copies, same titles, paraphrases, new text; inputs linking two entries. */
function fixture() {
  const p = project({ specs: false });
  const entries: Array<{ sid: string; title: string; body: string }> = [];
  for (let n = 0; n < 1200; n++) entries.push({ sid: `S-20260101-${n.toString(16).padStart(6, '0')}`, title: sentence(4), body: `The ${pick()} ${modal()} ${sentence(16)}.` });
  for (let f = 0; f * 50 < entries.length; f++)
    writeFileSync(join(p.root.workflowDir, 'specs', `file-${f}.md`), entries.slice(f * 50, f * 50 + 50).map((e) => `<spec-entry category="coding" keywords="${pick()}" date="2026-01-01" sid="${e.sid}" title="${e.title}">\n\n### ${e.title}\n\n${e.body}\n\n</spec-entry>\n`).join('\n'));
  const cands: LedgerCandidate[] = Array.from({ length: 120 }, (_, i) => {
    const e = entries[(i * 37) % entries.length]!;
    const pairs: Array<[string, string]> = [[e.title, e.body], [e.title, `The ${pick()} ${modal()} ${sentence(14)}.`], [sentence(4), `${e.body} ${sentence(3)}`], [sentence(4), `The ${pick()} ${modal()} ${sentence(16)}.`]];
    const [title, content] = pairs[i % 4]!;
    const action = (['propose', 'contest', 'supersede', 'propose'] as const)[i % 4]!;
    return { candidate_id: candidateId('spec', content), target: 'spec', action, title, content, category: 'coding', source_kind: 'manual', evidence_refs: ['run:run-ahead'], occurrences: 1, first_recorded_at: '2026-01-01T00:00:00.000Z', last_recorded_at: '2026-01-01T00:00:00.000Z', status: 'pending', promoted_id: null, promotion_receipt: null };
  });
  createSession(p.root, 'ahead');
  createRun(p.root, 'ahead', { runId: 'run-ahead' });
  const src = runSource(p.root, 'ahead', 'run-ahead');
  const inputs = [entries[3]!, entries[900]!].map((e) => ({ knowledge_id: e.sid, signal: 'validated' as const, source: 'manual' as const, count: 1, first_recorded_at: '2026-01-01T00:00:00.000Z', last_recorded_at: '2026-01-01T00:00:00.000Z' }));
  mkdirSync(src.dir, { recursive: true });
  writeFileSync(src.ledgerPath, JSON.stringify({ schema_version: RUN_LEDGER, session_id: 'ahead', run_id: 'run-ahead', revision: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', inputs, candidates: cands }));
  return { p, src };
}

/** The receipt as written, its times left out (each reconcile stamps its own). */
const written = (path: string) => JSON.parse(readFileSync(path, 'utf8').replace(/"(generated_at|resolved_at)": "[^"]*"/g, '"$1": "-"')) as { candidates: Array<{ disposition: string }> };

describe('scoring ahead of a reconcile', () => {
  it('a reconcile after scoring ahead writes the receipt the synchronous reconcile writes, scoring nothing itself', async () => {
    const { p, src } = fixture();
    const now = new Date('2026-02-01T00:00:00Z');
    reconcileSource(createLifecycleContext({ embedder: null }), p.root, src, { now });
    const synchronous = written(src.receiptPath);
    rmSync(src.receiptPath);

    const lc = createLifecycleContext({ embedder: null });
    expect(await scoreSessionAhead(lc, p.root, 'ahead')).toBe(120);
    reconcileSource(lc, p.root, src, { now });
    expect(lc.scored.hits).toBe(120);
    expect(written(src.receiptPath)).toEqual(synchronous);
    // The fixture exercises the matcher's branches, not only "unique".
    expect(new Set(synchronous.candidates.map((c) => c.disposition)).size).toBeGreaterThanOrEqual(4);
    // Fresh now: scoring ahead again scores nothing.
    expect(await scoreSessionAhead(lc, p.root, 'ahead')).toBe(0);
  });

  /** Turns of the event loop while `f` runs, counted by a probe that asks for the next turn each time. */
  async function turnsWhile(f: () => Promise<unknown>): Promise<number> {
    let turns = 0;
    let done = false;
    const probe = () => {
      if (done) return;
      turns++;
      setImmediate(probe);
    };
    setImmediate(probe);
    await f().finally(() => (done = true));
    return turns;
  }

  it('the event loop keeps turning while it scores: a probe gets a turn between slices', async () => {
    const { p } = fixture();
    const lc = createLifecycleContext({ embedder: null });
    // The corpus prepared first: the turns counted are the scoring's.
    const corpus = lc.corpus.read(p.root.workflowDir);
    lc.prepared.preparedFor(corpus.fingerprint, corpus.docs);
    // Slices of 0 ms: a turn between every two of the 120 candidates (the daemon's are SCORE_SLICE_MS).
    const turns = await turnsWhile(async () => expect(await scoreSessionAhead(lc, p.root, 'ahead', { corpus, sliceMs: 0 })).toBe(120));
    // Scored at once, the loop turns only between reading the session's sources (2 or 3 times).
    expect(turns).toBeGreaterThanOrEqual(100);
  });

  it('and while it prepares the corpus (tokens and postings of documents new to it), into the same prepared corpus', async () => {
    const { p } = fixture();
    const lc = createLifecycleContext({ embedder: null });
    const corpus = lc.corpus.read(p.root.workflowDir);
    let sliced!: PreparedCorpus;
    const turns = await turnsWhile(async () => (sliced = await lc.prepared.preparedForSliced(corpus.fingerprint, corpus.docs, 0)));
    expect(turns).toBeGreaterThanOrEqual(1000); // 1,200 documents, a turn between every two
    expect(lc.prepared.preparedFor(corpus.fingerprint, corpus.docs)).toBe(sliced); // kept as the last prepared
    const direct = prepareCorpus(corpus.docs);
    expect(sliced.feats).toEqual(direct.feats);
    expect(sliced.postings.tok.map((docs) => docs.length).sort()).toEqual(direct.postings.tok.map((docs) => docs.length).sort());
  });
});

describe('a refresh (reconcileSource) scores before it takes the lock', () => {
  it("scores with the project's lock free for other writers, and what changed meanwhile is scored under the lock: the receipt a reconcile of the new ledger writes", () => {
    const { p, src } = fixture();
    const now = new Date('2026-02-01T00:00:00Z');
    const lc = createLifecycleContext({ embedder: null });
    let freeWhileScored = false;
    // Between the scoring and the lock: another writer takes the project's lock at once, and stages one more candidate.
    const meanwhile = () => {
      acquireKernelLock(namespaceLockPath(src.receiptPath), 0, () => new Error('the lock is held while the refresh scores'))();
      freeWhileScored = true;
      stage(p.root, { target: 'spec', title: 'Staged meanwhile', content: `The ${pick()} must ${sentence(12)}.`, run: 'run-ahead', session: 'ahead' }, {});
    };
    reconcileSource(lc, p.root, src, { now, afterScoring: meanwhile });
    expect(freeWhileScored).toBe(true);
    expect(lc.scored.hits).toBe(120); // the 120 found scored under the lock; the one staged meanwhile scored there
    const refreshed = written(src.receiptPath);
    expect(refreshed.candidates).toHaveLength(121);
    reconcileSource(createLifecycleContext({ embedder: null }), p.root, src, { now });
    expect(refreshed).toEqual(written(src.receiptPath));
  });
});
