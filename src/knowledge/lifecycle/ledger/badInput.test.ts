/**
 * Bad input (issue "Knowledge II"): malformed ledgers and receipts, ids that
 * do not match their content, unknown resolution targets, paths escaping the
 * workflow root — a clear error naming the file and field, and nothing written.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { MAX_LIFECYCLE_JSON_BYTES, parseJsonFile } from '../jsonFile.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, type Project } from '../../../../test/helpers/knowledge2.js';
import { readReceipt, reconcileSource, runSource } from '../reconcile/receipt.js';
import { resolveCandidate, review } from '../reconcile/review.js';
import { completeRun, sealRun, stage } from '../session/ops.js';
import { createRun, createSession } from '../session/store.js';
import { MAX_LEDGER_BYTES, MAX_LEDGER_CANDIDATES, readLedger } from './ledger.js';
import { candidateId } from './recipes.js';
import { promote } from '../promote/promote.js';
import { promotionPath, readPromotions } from '../promote/promotion.js';
import { createLifecycleContext } from '../context.js';
import { builtinSources, loadCorpus } from '../../format/corpus.js';
import { parseSpecText } from '../../format/specParser.js';
import { decodeEntities } from '../../format/text.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

function withRun(p: Project): { ledger: string; id: string } {
  createSession(p.root, 's-1');
  createRun(p.root, 's-1', { runId: 'run-1' });
  const r = stage(p.root, { target: 'spec', title: 'Rule', content: 'Handlers validate input at the boundary.', run: 'run-1', session: 's-1' }, process.env);
  return { ledger: r.ledger, id: r.candidate.candidate_id };
}

function corrupt(file: string, edit: (o: Record<string, any>) => void): string {
  const o = JSON.parse(readFileSync(file, 'utf8'));
  edit(o);
  const text = JSON.stringify(o, null, 2);
  writeFileSync(file, text);
  return text;
}

describe('bad input changes nothing', () => {
  it('a candidate whose title or content holds a lone surrogate is refused, naming the field', () => {
    const p = project();
    const { ledger } = withRun(p);
    const before = readFileSync(ledger, 'utf8');
    const staging = (title: string, content: string) => () => stage(p.root, { target: 'spec', title, content, run: 'run-1', session: 's-1' }, process.env);
    expect(staging('Half \ud800 a pair', 'Fine.')).toThrow("The candidate's title holds a lone UTF-16 surrogate, which is no character; send valid Unicode text. Nothing was staged.");
    expect(staging('Rule', 'A low \udc00 alone.')).toThrow("The candidate's content holds a lone UTF-16 surrogate");
    expect(readFileSync(ledger, 'utf8')).toBe(before);
    // A whole pair is a character like any other.
    stage(p.root, { target: 'spec', title: 'Rule two', content: 'Ship it \ud83d\ude80.', run: 'run-1', session: 's-1' }, process.env);
  });

  it.each([
    ['wrong schema version', (o: any) => (o.schema_version = 'run-knowledge-delta/9.0'), /field schema_version must be one of/],
    // A newer writer's ledger: its version is what is said, not the first field this one does not know.
    ['a newer version with a field of its own', (o: any) => ((o.schema_version = 'run-knowledge-delta/2.0'), (o.future = true)), /field schema_version must be one of .*\(got "run-knowledge-delta\/2\.0"\)/],
    ['unknown top-level field', (o: any) => (o.extra = 1), /field extra is not part of the schema/],
    ['unknown candidate field', (o: any) => (o.candidates[0].mood = 'happy'), /field candidates\[0\]\.mood is not part of the schema/],
    ['bad enum', (o: any) => (o.candidates[0].action = 'delete'), /field candidates\[0\]\.action must be one of/],
    ['id not matching content', (o: any) => (o.candidates[0].content = 'Something else entirely.'), /field candidates\[0\]\.candidate_id does not match its content/],
    ['bad input signal', (o: any) => o.inputs.push({ knowledge_id: 'x', signal: 'liked', source: 'manual', count: 1, first_recorded_at: '', last_recorded_at: '' }), /field inputs\[0\]\.signal/],
  ])('a ledger with %s is refused naming file and field; staging into it writes nothing', (_name, edit, message) => {
    const p = project();
    const { ledger } = withRun(p);
    const text = corrupt(ledger, edit);
    expect(() => readLedger(ledger)).toThrow(message);
    expect(() => readLedger(ledger)).toThrow(ledger);
    expect(() => stage(p.root, { target: 'spec', title: 'T', content: 'Another rule.', run: 'run-1', session: 's-1' }, process.env)).toThrow(message);
    expect(readFileSync(ledger, 'utf8')).toBe(text);
  });

  it.each([
    ['null', 'must hold a JSON object, found null.'],
    ['[]', 'must hold a JSON object, found [].'],
    ['"x"', 'must hold a JSON object, found "x".'],
    ['7', 'must hold a JSON object, found 7.'],
  ])('a ledger holding %s is refused naming the file and what it found; staging into it writes nothing', (text, why) => {
    const p = project();
    const { ledger } = withRun(p);
    writeFileSync(ledger, text);
    expect(() => readLedger(ledger)).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE', message: `${ledger}: ${why}`, details: { file: ledger } }));
    expect(() => stage(p.root, { target: 'spec', title: 'T', content: 'Another rule.', run: 'run-1', session: 's-1' }, process.env)).toThrow(`${ledger}: ${why}`);
    expect(readFileSync(ledger, 'utf8')).toBe(text);
  });

  it('an item of a ledger that is not an object is refused naming the field and what it found (or that it is missing)', () => {
    const p = project();
    const { ledger } = withRun(p);
    corrupt(ledger, (o) => o.inputs.push(5));
    expect(() => readLedger(ledger)).toThrow(`${ledger}: field inputs[0] must be an object, found 5.`);
    corrupt(ledger, (o) => {
      o.inputs = [];
      delete o.candidates[0].promotion_receipt;
    });
    expect(() => readLedger(ledger)).toThrow(`${ledger}: field candidates[0].promotion_receipt must be an object; it is missing.`);
  });

  // Every candidate is scored against every corpus document on the daemon's event loop: 100,000 committed in a
  // ledger held it for minutes. Refused before reading (size) or before scoring (count); staging stops at the cap.
  it('a ledger over the size or candidate cap is refused naming the file, and a candidate past the cap is not staged', () => {
    const p = project();
    const { ledger } = withRun(p);
    const many = (n: number, o: Record<string, any>) => {
      const first = o.candidates[0];
      o.candidates = Array.from({ length: n }, (_, i) => ({ ...first, content: `Rule number ${i}.`, candidate_id: candidateId('spec', `Rule number ${i}.`) }));
    };
    corrupt(ledger, (o) => many(MAX_LEDGER_CANDIDATES + 1, o));
    expect(() => readLedger(ledger)).toThrow(`${ledger}: field candidates holds ${MAX_LEDGER_CANDIDATES + 1} candidates, more than a ledger may (${MAX_LEDGER_CANDIDATES})`);
    expect(() => reconcileSource(lc, p.root, runSource(p.root, 's-1', 'run-1'))).toThrow(/more than a ledger may/);

    const full = corrupt(ledger, (o) => many(MAX_LEDGER_CANDIDATES, o));
    expect(readLedger(ledger)!.candidates).toHaveLength(MAX_LEDGER_CANDIDATES);
    expect(() => stage(p.root, { target: 'spec', title: 'T', content: 'One rule too many.', run: 'run-1', session: 's-1' }, process.env)).toThrow(`already holds ${MAX_LEDGER_CANDIDATES} candidates`);
    expect(readFileSync(ledger, 'utf8')).toBe(full);

    const big = corrupt(ledger, (o) => (o.candidates[0].title = 'x'.repeat(MAX_LEDGER_BYTES)));
    expect(() => readLedger(ledger)).toThrow(`${ledger}: ${Buffer.byteLength(big)} bytes, more than a ledger may be (${MAX_LEDGER_BYTES}); it was not read.`);
  });

  it('a stage that would grow a ledger past its size cap writes nothing', () => {
    const p = project();
    const { ledger } = withRun(p);
    const text = corrupt(ledger, (o) => (o.candidates[0].title = 'x'.repeat(MAX_LEDGER_BYTES - 2000)));
    expect(() => stage(p.root, { target: 'spec', title: 'y'.repeat(3000), content: 'A rule that does not fit.', run: 'run-1', session: 's-1' }, process.env)).toThrow(`would grow to`);
    expect(readFileSync(ledger, 'utf8')).toBe(text);
  });

  it('restaging identical content with a conflicting action is refused; identical content counts an occurrence', () => {
    const p = project();
    const { ledger, id } = withRun(p);
    const again = stage(p.root, { target: 'spec', title: 'Other title', content: '  handlers validate INPUT at the boundary. ', run: 'run-1', session: 's-1', evidence: ['docs/a.md#x'] }, process.env);
    expect(again.candidate).toMatchObject({ candidate_id: id, occurrences: 2 });
    expect(again.candidate.evidence_refs).toEqual(['run:run-1', 'docs/a.md#x']);
    const before = readFileSync(ledger, 'utf8');
    expect(() => stage(p.root, { target: 'spec', title: 'x', content: 'Handlers validate input at the boundary.', action: 'contest', run: 'run-1', session: 's-1' }, process.env)).toThrow(/already staged with action propose/);
    expect(readFileSync(ledger, 'utf8')).toBe(before);
  });

  it('resolutions: unknown target, empty reason, missing target, stale receipt — refused, receipt unchanged', () => {
    const p = project();
    const { id } = withRun(p);
    const src = runSource(p.root, 's-1', 'run-1');
    reconcileSource(lc, p.root, src);
    const before = readFileSync(src.receiptPath, 'utf8');
    expect(() => resolveCandidate(lc, p.root, 's-1', { candidate: id, as: 'related', target: 'S-29990101-none', reason: 'r' })).toThrow(/--target S-29990101-none is not active project knowledge/);
    expect(() => resolveCandidate(lc, p.root, 's-1', { candidate: id, as: 'unique', reason: '  ' })).toThrow(/empty reason/);
    expect(() => resolveCandidate(lc, p.root, 's-1', { candidate: id, as: 'duplicate', reason: 'r' })).toThrow(/needs --target/);
    expect(() => resolveCandidate(lc, p.root, 's-1', { candidate: id, as: 'maybe', reason: 'r' })).toThrow(/--as must be/);
    expect(readFileSync(src.receiptPath, 'utf8')).toBe(before);
    stage(p.root, { target: 'spec', title: 'N', content: 'A new candidate makes the receipt stale.', run: 'run-1', session: 's-1' }, process.env);
    expect(() => resolveCandidate(lc, p.root, 's-1', { candidate: id, as: 'unique', reason: 'r' })).toThrow(/stale .*maestro knowledge review s-1 --refresh/);
    expect(readFileSync(src.receiptPath, 'utf8')).toBe(before);
  });

  it('a malformed receipt is reported as corrupt (never trusted, never silently missing), and reconcile replaces it, keeping the old bytes', () => {
    const p = project();
    withRun(p);
    const src = runSource(p.root, 's-1', 'run-1');
    const broken = '{"schema_version": "knowledge-reconciliation/1.0", "candidates": "no"}';
    writeFileSync(src.receiptPath, broken);
    expect(() => readReceipt(src)).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE', status: 500 }));
    expect(() => readReceipt(src)).toThrow(`${src.receiptPath}: field corpus_fingerprint must be a string`);
    const seen = review(lc, p.root, 's-1').sources[0]!;
    expect(seen).toMatchObject({ receipt: 'missing', error: expect.stringContaining(src.receiptPath) });
    expect(seen.reasons[0]).toMatch(/^receipt unreadable: /);
    reconcileSource(lc, p.root, src);
    expect(review(lc, p.root, 's-1').sources[0]!.receipt).toBe('fresh');
    expect(readFileSync(`${src.receiptPath}.corrupt`, 'utf8')).toBe(broken);
  });

  // A receipt, run.json or session.json is a repository's file as well (.workflow/ is committed), read whole with
  // JSON.parse on the daemon's event loop by every review: past its cap it is corrupt from its size, unread.
  it('a receipt or a run file larger than the cap is refused from its size, unread; reconcile replaces the receipt', () => {
    const p = project();
    withRun(p);
    const src = runSource(p.root, 's-1', 'run-1');
    writeFileSync(src.receiptPath, '{"schema_version": "knowledge-reconciliation/1.0"');
    truncateSync(src.receiptPath, MAX_LIFECYCLE_JSON_BYTES + 1);
    expect(() => readReceipt(src)).toThrow(`${src.receiptPath}: ${MAX_LIFECYCLE_JSON_BYTES + 1} bytes, more than the file may be (${MAX_LIFECYCLE_JSON_BYTES}); it was not read; rebuild it`);
    reconcileSource(lc, p.root, src);
    expect(review(lc, p.root, 's-1').sources[0]!.receipt).toBe('fresh');
    const runFile = join(src.dir, 'run.json');
    truncateSync(runFile, MAX_LIFECYCLE_JSON_BYTES + 1);
    expect(() => parseJsonFile(runFile)).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE', message: `${runFile}: ${MAX_LIFECYCLE_JSON_BYTES + 1} bytes, more than the file may be (${MAX_LIFECYCLE_JSON_BYTES}); it was not read.` }));
  });

  it('an unreadable promotion receipt is reported; its promoted candidates never show as pending again', () => {
    const p = project();
    const { id } = withRun(p);
    sealRun(lc, p.root, 's-1', 'run-1');
    expect(promote(lc, p.root, 's-1', { candidates: [id] }).promoted.map((x) => x.candidate_id)).toEqual([id]);
    expect(review(lc, p.root, 's-1').candidates.map((c) => c.candidate_id)).not.toContain(id);
    const file = promotionPath(runSource(p.root, 's-1', 'run-1').dir);
    writeFileSync(file, '{"schema_version": ');
    expect(() => readPromotions(runSource(p.root, 's-1', 'run-1').dir)).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE' }));
    const r = review(lc, p.root, 's-1');
    expect(r.candidates.map((c) => c.candidate_id)).not.toContain(id);
    expect(r.sources.find((s) => s.run_id === 'run-1')).toMatchObject({ receipt: 'missing', error: expect.stringContaining(`${file}: not valid JSON`) });
    expect(() => promote(lc, p.root, 's-1', { candidates: [id] })).toThrow(file);
    expect(readFileSync(file, 'utf8')).toBe('{"schema_version": ');
    // JSON that is no receipt: said as such (null crashed with a TypeError; an array of entries passed).
    for (const [text, said] of [['null', 'must hold a JSON object, found null'], ['[]', 'must hold a JSON object, found []'], ['{"schema_version": "knowledge-promotion-receipt/1.0", "entries": []}', 'field entries must be an object, found []']] as const) {
      writeFileSync(file, text);
      expect(() => readPromotions(runSource(p.root, 's-1', 'run-1').dir)).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE', message: expect.stringContaining(`${file}: ${said}.`) }));
      expect(review(lc, p.root, 's-1').candidates.map((c) => c.candidate_id)).not.toContain(id);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
  });

  it('a staged candidate titled with </spec-entry> is promoted into a well-formed entry that reads back whole', () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    const title = 'Evil </spec-entry> title';
    const { candidate } = stage(p.root, { target: 'spec', title, content: 'Body that <spec-entry> must not cut.', run: 'run-1', session: 's-1' }, process.env);
    sealRun(lc, p.root, 's-1', 'run-1');
    const [done] = promote(lc, p.root, 's-1', { candidates: [candidate.candidate_id] }).promoted;
    const file = join(p.root.workflowDir, 'specs', 'learnings.md');
    const parsed = parseSpecText(readFileSync(file, 'utf8'), file);
    expect(parsed.findings).toEqual([]);
    const entry = loadCorpus(builtinSources(p.root)).entries.find((e) => e.sid === done!.promoted_id);
    expect(entry?.title).toBe(title);
    expect(decodeEntities(entry!.body)).toContain('Body that <spec-entry> must not cut.');
  });

  it('session and run ids that would escape the workflow root are refused', () => {
    const p = project();
    expect(() => createSession(p.root, '../evil')).toThrow(/session id "..\/evil" must match/);
    expect(() => createSession(p.root, 'a/b')).toThrow(/must match/);
    createSession(p.root, 's-1');
    expect(() => createRun(p.root, 's-1', { runId: '..' })).toThrow(/run id ".." must match/);
    expect(() => stage(p.root, { target: 'spec', title: 't', content: 'c', run: '../../x', session: 's-1' }, process.env)).toThrow(/run id/);
  });

  it('a sealed run refuses every write and its ledger is untouched', () => {
    const p = project();
    const { ledger } = withRun(p);
    sealRun(lc, p.root, 's-1', 'run-1');
    const before = readFileSync(ledger, 'utf8');
    expect(() => stage(p.root, { target: 'spec', title: 't', content: 'Late rule.', run: 'run-1', session: 's-1' }, process.env)).toThrow(/sealed/);
    expect(() => completeRun(lc, p.root, 's-1', 'run-1')).toThrow(/sealed/);
    expect(readFileSync(ledger, 'utf8')).toBe(before);
  });
});
