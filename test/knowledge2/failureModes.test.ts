/**
 * Seed 000 §11.1, row by row: each failure is produced for real and the
 * recovery the table promises is shown. Plus the two multi-process cases of
 * the issue: 4 processes promoting into one spec file, and kill -9 between
 * the spec write and the receipt. The row → test map is in
 * src/knowledge/LIFECYCLE.md ("Failure modes").
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, type Project } from '../helpers/knowledge2.js';
import { readCorpus } from '../../src/knowledge/lifecycle/ledger/corpusDocs.js';
import { promote } from '../../src/knowledge/lifecycle/promote/promote.js';
import { readPromotions } from '../../src/knowledge/lifecycle/promote/promotion.js';
import { readReceipt, reconcileSource, runSource } from '../../src/knowledge/lifecycle/reconcile/receipt.js';
import { review } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { sealRun, stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { parseSpecText } from '../../src/knowledge/format/specParser.js';
import { appendSpecEntry } from '../../src/knowledge/format/specWriter.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { scriptArgs } from '../helpers/script.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

const WORKER = join(import.meta.dirname, 'promoteWorker.ts');
const HOLDER = join(import.meta.dirname, 'lockHolder.ts');

/** A session with one sealed run holding one staged spec candidate. */
function sealedSession(p: Project, sid: string, content: string, rid = 'run-1'): string {
  createSession(p.root, sid);
  createRun(p.root, sid, { runId: rid });
  const { candidate } = stage(p.root, { target: 'spec', title: content.slice(0, 40), content, category: 'coding', run: rid, session: sid }, process.env);
  sealRun(lc, p.root, sid, rid);
  return candidate.candidate_id;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...scriptArgs(WORKER), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const specEntries = (p: Project) => parseSpecText(readFileSync(join(p.root.workflowDir, 'specs', 'coding-conventions.md'), 'utf8'), 'coding-conventions.md').entries;

describe('seed 000 §11.1 failure modes', () => {
  it('reconcile crashed mid-way: the incomplete receipt reads as missing; reconcile again overwrites it whole', () => {
    const p = project();
    const id = sealedSession(p, 's-1', 'Log lines are structured JSON with a request id.');
    const src = runSource(p.root, 's-1', 'run-1');
    const full = JSON.parse(readFileSync(src.receiptPath, 'utf8'));
    delete full.corpus_fingerprint;
    delete full.matcher_revision;
    writeFileSync(src.receiptPath, JSON.stringify(full).slice(0, 200)); // cut short, and missing fields
    expect(review(lc, p.root, 's-1').sources[0]).toMatchObject({ run_id: 'run-1', receipt: 'missing' });
    expect(() => promote(lc, p.root, 's-1', { candidates: [id] })).toThrow(/missing.*maestro knowledge review s-1 --refresh/);
    const r = review(lc, p.root, 's-1', { refresh: true });
    expect(r.sources[0]!.receipt).toBe('fresh');
    expect(readReceipt(src)!.matcher_revision).toBe('semantic-delta/1.0');
    expect(promote(lc, p.root, 's-1', { candidates: [id] }).promoted).toHaveLength(1);
  });

  it('promotion killed (-9) after the spec write, before the receipt: stays promoting; a rerun writes nothing twice', async () => {
    const p = project();
    const id = sealedSession(p, 's-1', 'Database migrations are forward-only and idempotent.');
    const killed = await run([p.dir, 's-1'], { MAESTRO_KNOWLEDGE_CRASH_AFTER_WRITE: id });
    expect(killed.signal).toBe('SIGKILL');
    const intent = readPromotions(runSource(p.root, 's-1', 'run-1').dir)!.entries[id]!;
    expect(intent.state).toBe('promoting');
    const planned = intent.planned_id;
    expect(specEntries(p).filter((e) => e.sid === planned)).toHaveLength(1);
    // The corpus changed (our own entry): the receipt is stale; refresh, then promote again.
    review(lc, p.root, 's-1', { refresh: true });
    const again = await run([p.dir, 's-1']);
    expect(again.code).toBe(0);
    const out = JSON.parse(again.stdout);
    expect(out.promoted).toEqual([{ candidate_id: id, target: 'spec', promoted_id: planned, outcome: 'created', supersedes: null }]);
    expect(specEntries(p).filter((e) => e.sid === planned)).toHaveLength(1);
    expect(readPromotions(runSource(p.root, 's-1', 'run-1').dir)!.entries[id]).toMatchObject({ state: 'promoted', outcome: 'created' });
    // And once more: already promoted, still one entry.
    expect(promote(lc, p.root, 's-1', { candidates: [id] }).already_promoted).toEqual([{ candidate_id: id, promoted_id: planned }]);
    expect(specEntries(p).filter((e) => e.sid === planned)).toHaveLength(1);
  });

  it('a corrupt knowledge-delta.json makes that run "missing" and leaves the other runs working', () => {
    const p = project();
    const good = sealedSession(p, 's-1', 'Feature flags are read once per request.', 'run-good');
    createRun(p.root, 's-1', { runId: 'run-bad' });
    stage(p.root, { target: 'spec', title: 'x', content: 'Another rule entirely about queues.', run: 'run-bad', session: 's-1' }, process.env);
    sealRun(lc, p.root, 's-1', 'run-bad');
    writeFileSync(runSource(p.root, 's-1', 'run-bad').ledgerPath, '{"schema_version": "run-knowledge-delta/1.0", ');
    const r = review(lc, p.root, 's-1', { refresh: true });
    expect(r.sources.find((s) => s.run_id === 'run-bad')).toMatchObject({ receipt: 'missing' });
    expect(r.sources.find((s) => s.run_id === 'run-bad')!.error).toMatch(/knowledge-delta\.json: not valid JSON/);
    expect(r.candidates.map((c) => c.candidate_id)).toEqual([good]);
    const res = promote(lc, p.root, 's-1', { all: true });
    expect(res.promoted.map((x) => x.candidate_id)).toEqual([good]);
    expect(res.warnings.join('\n')).toMatch(/run-bad: skipped/);
  });

  it('corpus fingerprint is incremental: one changed file costs one parse and gives the full answer', () => {
    const p = project();
    for (let i = 0; i < 30; i++) appendSpecEntry(p.root, { category: 'coding', title: `Rule ${i}`, content: `Rule number ${i} says something specific about module ${i}.`, keywords: ['k'], file: `f${i % 10}.md` });
    lc.corpus.clear();
    const first = lc.corpus.read(p.root.workflowDir);
    expect(first.parsed).toBe(11);
    expect(lc.corpus.read(p.root.workflowDir).parsed).toBe(0);
    appendSpecEntry(p.root, { category: 'coding', title: 'Rule new', content: 'A new rule in one file.', keywords: ['k'], file: 'f3.md' });
    const inc = lc.corpus.read(p.root.workflowDir);
    expect(inc.parsed).toBe(1);
    expect(inc.fingerprint).not.toBe(first.fingerprint);
    expect(inc.fingerprint).toBe(readCorpus(p.root.workflowDir).fingerprint);
  });

  it('4 processes promoting into one spec file at once: serialized by the lock, none lost, none doubled', async () => {
    const p = project();
    const ids = ['a', 'b', 'c', 'd'].map((x) => sealedSession(p, `s-${x}`, `Rule ${x}: services in zone ${x} must pin their base image digests.`));
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((x) => run([p.dir, `s-${x}`])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const promoted = results.map((r) => JSON.parse(r.stdout).promoted[0].candidate_id).sort();
    expect(promoted).toEqual([...ids].sort());
    const entries = specEntries(p);
    expect(entries).toHaveLength(2 + 4);
    expect(new Set(entries.map((e) => e.sid)).size).toBe(6);
  });

  it('lock timeout fails closed (nothing written); once the holder is gone its lock is reclaimed and a retry promotes once', async () => {
    const p = project();
    const id = sealedSession(p, 's-1', 'Queue consumers acknowledge only after the side effect is durable.');
    const file = join(p.root.workflowDir, 'specs', 'coding-conventions.md');
    const before = readFileSync(file, 'utf8');
    // Another process (think: a second session promoting) holds the lock of this spec file.
    const holder = spawn(process.execPath, [...scriptArgs(HOLDER), file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => holder.on('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      holder.stdout!.on('data', (d) => ((out += d), out.includes('held') && resolve()));
      holder.on('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
    });
    let err: unknown;
    try {
      promote(lc, p.root, 's-1', { candidates: [id], lockTimeoutMs: 300 });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'LOCK_TIMEOUT' });
    expect((err as Error).message).toMatch(/Timed out after 300 ms waiting for the corpus lock .*\.maestro-corpus\.lock; another writer holds it\. Nothing was written/);
    // Fail closed: the spec file is byte for byte what it was; the candidate is not promoted.
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readPromotions(runSource(p.root, 's-1', 'run-1').dir)?.entries[id]).toBeUndefined();
    // The holder dies without releasing anything: its <file>.lock stays behind, its kernel lock goes with it.
    holder.kill('SIGKILL');
    await exited;
    expect(existsSync(`${file}.lock`)).toBe(true);
    // Retry: the dead owner's lock is reclaimed, the receipt is still fresh, and the entry is written once.
    const res = promote(lc, p.root, 's-1', { candidates: [id], lockTimeoutMs: 2000 });
    expect(res.promoted).toEqual([{ candidate_id: id, target: 'spec', promoted_id: expect.stringMatching(/^S-\d{8}-[a-f0-9]{16}$/), outcome: 'created', supersedes: null }]);
    expect(specEntries(p).filter((e) => e.sid === res.promoted[0]!.promoted_id)).toHaveLength(1);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('corpus changed by a third party after the fence check: the write succeeds; review --refresh rebuilds the receipt', () => {
    const p = project();
    const id = sealedSession(p, 's-1', 'Every public function has a doc comment.');
    const res = promote(lc, p.root, 's-1', {
      candidates: [id],
      afterGates: () => appendFileSync(join(p.root.workflowDir, 'specs', 'coding-conventions.md'), '\n<spec-entry category="coding" keywords="x" date="2026-03-03" sid="S-20260303-cccc" title="Third party">\n\n### Third party\n\nWritten by someone else.\n\n</spec-entry>\n'),
    });
    expect(res.promoted).toHaveLength(1);
    // Another candidate in the session now sees a stale receipt until refreshed.
    createRun(p.root, 's-1', { runId: 'run-2' });
    stage(p.root, { target: 'spec', title: 'y', content: 'A second rule about doc comments on public functions.', run: 'run-2', session: 's-1' }, process.env);
    reconcileSource(lc, p.root, runSource(p.root, 's-1', 'run-2'));
    appendFileSync(join(p.root.workflowDir, 'specs', 'coding-conventions.md'), '\n');
    writeFileSync(join(p.root.workflowDir, 'specs', 'extra.md'), '<spec-entry category="coding" keywords="x" date="2026-03-04" sid="S-20260304-dddd" title="Later">\n\n### Later\n\nChanged again.\n\n</spec-entry>\n');
    expect(review(lc, p.root, 's-1').sources.find((s) => s.run_id === 'run-2')!.receipt).toBe('stale');
    expect(review(lc, p.root, 's-1', { refresh: true }).sources.find((s) => s.run_id === 'run-2')!.receipt).toBe('fresh');
  });
});
