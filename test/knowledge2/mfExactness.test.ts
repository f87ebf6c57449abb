/**
 * Issue 16 items 5 and 6: what maestro-flow does with the same files, case by
 * case, and the promotion lifecycle edges. Expected values were produced by
 * running maestro-flow v0.5.79's own code (catlog22/maestro-flow 055e4e75) on
 * these exact files; the run files are the published maestro-fabric-gui ones.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FABRIC_RID, FABRIC_SID, maestro, project, type Project } from '../helpers/knowledge2.js';
import { addKnowhow } from '../../src/knowledge/format/knowhowWriter.js';
import { readLedger } from '../../src/knowledge/lifecycle/ledger/ledger.js';
import { promote } from '../../src/knowledge/lifecycle/promote/promote.js';
import { runSource, sessionSource } from '../../src/knowledge/lifecycle/reconcile/receipt.js';
import { resolveCandidate, review } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { sealRun, stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession, readRun, writeRun } from '../../src/knowledge/lifecycle/session/store.js';
import { parseSpecText } from '../../src/knowledge/format/specParser.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { scriptArgs } from '../helpers/script.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

const SEALED = join(import.meta.dirname, '..', 'fixtures', 'knowledge2', 'fabric-gui-f1f8f81');
const WORKER = join(import.meta.dirname, 'promoteWorker.ts');

/** The fabric-gui project at f1f8f81: a completed session, a sealed run, five pending candidates. */
function fabricSealed(): Project {
  const p = project({ fixture: 'fabric' });
  cpSync(SEALED, p.dir, { recursive: true });
  return p;
}

const LEGACY_SPEC = `---
title: "Learnings"
readMode: optional
priority: medium
category: learning
keywords:
  - bug
---

# Learnings

## Entries

### [2026-05-01] Retry uploads with jitter

Uploads that fail are retried with exponential backoff and jitter.

### [learning] [2026-05-02 10:30] Cache keys include the tenant

A cache key without the tenant leaks data across tenants.

<spec-entry category="learning" keywords="docs,size" date="2026-06-01" sid="S-20260601-ab12" title="Large design note" ref="knowhow/DOC-20260601-design.md">

### Large design note

The first 200 characters of a long note.

</spec-entry>
`;

/** A knowhow file exactly as maestro-flow's `store_knowhow add` wrote it for the request below. */
const MF_KNOWHOW = `---
title: Retry policy
description: How uploads retry
type: tip
explicitId: tip-20260922-retry-policy
created: 2026-12-01T12:29:19.808Z
keywords:
  - Upload
  - Retry
  - HTTP
tags:
  - Network
  - promoted
---

Retry uploads with backoff.
`;

describe('maestro-flow exactness (same files, same results)', () => {
  it('dates a promoted spec id by the candidate\'s first_recorded_at and records the promotion in the run ledger', () => {
    const p = fabricSealed();
    review(lc, p.root, FABRIC_SID, { refresh: true });
    const r = promote(lc, p.root, FABRIC_SID, { candidates: ['KDC-0acd2a63ab4f9f01'], now: new Date('2026-12-01T09:00:00Z') });
    // maestro-flow writes S-20260922-0acd2a63ab4f9f01 for this candidate (first recorded 2026-09-22).
    expect(r.promoted).toEqual([{ candidate_id: 'KDC-0acd2a63ab4f9f01', target: 'spec', promoted_id: 'S-20260922-0acd2a63ab4f9f01', outcome: 'created', supersedes: null }]);
    const spec = parseSpecText(readFileSync(join(p.root.workflowDir, 'specs', 'architecture-constraints.md'), 'utf8'), 'architecture-constraints.md');
    expect(spec.entries.map((e) => e.sid)).toEqual(['S-20260922-0acd2a63ab4f9f01']);
    // Where maestro-flow reads promotion state: the run's own ledger (sealed run or not).
    const ledger = readLedger(runSource(p.root, FABRIC_SID, FABRIC_RID).ledgerPath)!;
    const c = ledger.candidates.find((x) => x.candidate_id === 'KDC-0acd2a63ab4f9f01')!;
    expect(c).toMatchObject({ status: 'promoted', promoted_id: 'S-20260922-0acd2a63ab4f9f01', promotion_receipt: { outcome: 'created' } });
    expect(c.promotion_receipt!.content_hash).toMatch(/^[a-f0-9]{64}$/);
    expect(ledger.revision).toBeGreaterThan(3);
    expect(ledger.candidates.filter((x) => x.status === 'pending')).toHaveLength(4);
  });

  it('dates a promoted tip- id by first_recorded_at too', () => {
    const p = project();
    createSession(p.root, 's-1');
    const { candidate } = stage(p.root, { target: 'knowhow', title: 'Flaky test triage', content: 'Quarantine a flaky test within a day and open an issue naming its owner.', session: 's-1' }, process.env);
    review(lc, p.root, 's-1', { refresh: true });
    const day = candidate.first_recorded_at.slice(0, 10).replace(/-/g, '');
    const r = promote(lc, p.root, 's-1', { candidates: [candidate.candidate_id], now: new Date('2031-03-04T00:00:00Z') });
    expect(r.promoted[0]!.promoted_id).toBe(`knowhow-tip-${day}-${candidate.candidate_id.slice(4)}`);
    expect(existsSync(join(p.root.workflowDir, 'knowhow', `TIP-${day}-${candidate.candidate_id.slice(4)}.md`))).toBe(true);
    expect(readLedger(sessionSource(p.root, 's-1').ledgerPath)!.candidates[0]).toMatchObject({ status: 'promoted', promoted_id: `knowhow-tip-${day}-${candidate.candidate_id.slice(4)}` });
  });

  it('fingerprints legacy heading entries with their heading, and ref= as a relation (value from maestro-flow\'s code)', () => {
    const p = project({ specs: false });
    writeFileSync(join(p.root.workflowDir, 'specs', 'learnings.md'), LEGACY_SPEC);
    lc.corpus.clear();
    const c = lc.corpus.read(p.root.workflowDir);
    expect(c.fingerprint).toBe('d55f2df5783357e5eae563cf4cbaf2c35af8fa0861041885e5d4c4e1012dc1d7');
    expect(c.docs.find((d) => d.id === 'S-20260601-ab12')!.related).toEqual(['knowhow/DOC-20260601-design.md']);
    expect(c.docs.find((d) => d.id.startsWith('legacy:learnings.md:'))!.content).toMatch(/^### Retry uploads with jitter\n\nUploads that fail/);
  });

  it('replays `knowhow add --id` with capitalised keywords, as maestro-flow does (same payload hash)', () => {
    const p = project();
    mkdirSync(join(p.root.workflowDir, 'knowhow'), { recursive: true });
    const file = join(p.root.workflowDir, 'knowhow', 'TIP-20260922-retry-policy.md');
    writeFileSync(file, MF_KNOWHOW);
    const r = addKnowhow(p.root, { type: 'tip', title: 'Retry policy', description: 'How uploads retry', body: 'Retry uploads with backoff.\n', keywords: ['Upload', 'Retry', 'HTTP'], tags: ['Network', 'promoted'], explicitId: 'tip-20260922-retry-policy' });
    expect(r).toMatchObject({ replayed: true, id: 'knowhow-tip-20260922-retry-policy', payloadHash: 'sha256:c34cb6a5d841f14d2eab9cfdb785ef5817d2fbfa203e5b3652de00e00cf3d7a4' });
    expect(readFileSync(file, 'utf8')).toBe(MF_KNOWHOW);
    // A real difference is still a conflict.
    expect(() => addKnowhow(p.root, { type: 'tip', title: 'Retry policy', description: 'How uploads retry', body: 'Retry uploads once.\n', keywords: ['Upload'], explicitId: 'tip-20260922-retry-policy' })).toThrow(/already exists with different content/);
  });

  it('keeps keys it does not know when it rewrites a run file (command_contract_hash)', () => {
    const p = fabricSealed();
    const run = readRun(p.root, FABRIC_SID, FABRIC_RID);
    writeRun(p.root, run);
    const raw = JSON.parse(readFileSync(join(p.root.workflowDir, 'sessions', FABRIC_SID, 'runs', FABRIC_RID, 'run.json'), 'utf8'));
    expect(raw.command_contract_hash).toBe('sha256:2d749b81e331da30077d9715162c0fee92173782e4eb209d7a1e715960f28896');
    expect(raw).toMatchObject({ schema_version: 'run/3.0', status: 'sealed', revision: 3, actor_id: 'devin' });
  });
});

function runWorker(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...scriptArgs(WORKER), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A session whose sealed run-1 holds one eligible candidate and one that needs review. */
function twoCandidates(p: Project): { eligible: string; review: string } {
  createSession(p.root, 's-1');
  createRun(p.root, 's-1', { runId: 'run-1' });
  const a = stage(p.root, { target: 'spec', title: 'Pin base images', content: 'Container builds pin their base image by digest, never by a floating tag.', category: 'arch', run: 'run-1', session: 's-1' }, process.env);
  const b = stage(p.root, { target: 'spec', title: 'Errors carry codes', content: 'Errors shown to users never carry internal codes.', category: 'coding', action: 'contest', run: 'run-1', session: 's-1' }, process.env);
  sealRun(lc, p.root, 's-1', 'run-1');
  return { eligible: a.candidate.candidate_id, review: b.candidate.candidate_id };
}

describe('promotion lifecycle edges', () => {
  it('promote --all after a successful promote is a no-op that exits 0 (the receipt is refreshed by promote itself)', async () => {
    const p = project();
    const ids = twoCandidates(p);
    const W = ['--workflow-root', p.dir, '--json'];
    const first = await maestro(['knowledge', 'promote', 's-1', '--all', ...W]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ promoted: [{ candidate_id: ids.eligible, outcome: 'created' }], skipped_review_required: [ids.review] });
    const spec = readFileSync(join(p.root.workflowDir, 'specs', 'architecture-constraints.md'), 'utf8');
    const again = await maestro(['knowledge', 'promote', 's-1', '--all', ...W]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ promoted: [], skipped_review_required: [ids.review] });
    expect(readFileSync(join(p.root.workflowDir, 'specs', 'architecture-constraints.md'), 'utf8')).toBe(spec);
    const one = await maestro(['knowledge', 'promote', 's-1', '--candidate', ids.eligible, ...W]);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).already_promoted).toEqual([{ candidate_id: ids.eligible, promoted_id: expect.stringMatching(/^S-\d{8}-/) }]);
  });

  it('two concurrent promotes of one candidate: one reports created, the other already promoted; one entry written', async () => {
    const p = project();
    const { eligible } = twoCandidates(p);
    review(lc, p.root, 's-1', { refresh: true });
    const results = await Promise.all([runWorker([p.dir, 's-1', eligible]), runWorker([p.dir, 's-1', eligible])]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const outs = results.map((r) => JSON.parse(r.stdout) as { promoted: Array<{ outcome: string }>; already_promoted: Array<{ candidate_id: string }> });
    expect(outs.map((o) => o.promoted.length).sort()).toEqual([0, 1]);
    expect(outs.find((o) => o.promoted.length === 1)!.promoted[0]!.outcome).toBe('created');
    expect(outs.find((o) => o.promoted.length === 0)!.already_promoted.map((a) => a.candidate_id)).toEqual([eligible]);
    const entries = parseSpecText(readFileSync(join(p.root.workflowDir, 'specs', 'architecture-constraints.md'), 'utf8'), 'x.md').entries;
    expect(entries).toHaveLength(1);
  });

  it('refuses to restage a candidate with a conflicting action in another run of the same session; nothing is written', () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    createRun(p.root, 's-1', { runId: 'run-2' });
    const content = 'Feature flags are evaluated once per request.';
    stage(p.root, { target: 'spec', title: 'Flags', content, run: 'run-1', session: 's-1' }, process.env);
    expect(() => stage(p.root, { target: 'spec', title: 'Flags', content, action: 'contest', run: 'run-2', session: 's-1' }, process.env)).toThrow(/staged with action propose in run run-1/);
    expect(existsSync(runSource(p.root, 's-1', 'run-2').ledgerPath)).toBe(false);
    // The same action in another run is corroboration, not a conflict.
    expect(stage(p.root, { target: 'spec', title: 'Flags', content, run: 'run-2', session: 's-1' }, process.env).candidate.action).toBe('propose');
  });

  it('refuses a candidate titled like an active spec entry unless resolved as supersede; then the old entry is deprecated', () => {
    const p = project();
    createSession(p.root, 's-1');
    const { candidate } = stage(p.root, { target: 'spec', title: 'Retry budget', content: 'Batch jobs retry failed items up to ten times, spaced an hour apart.', category: 'coding', session: 's-1' }, process.env);
    review(lc, p.root, 's-1', { refresh: true });
    resolveCandidate(lc, p.root, 's-1', { candidate: candidate.candidate_id, as: 'unique', reason: 'batch jobs differ from network calls' });
    const file = join(p.root.workflowDir, 'specs', 'coding-conventions.md');
    const before = readFileSync(file, 'utf8');
    expect(() => promote(lc, p.root, 's-1', { candidates: [candidate.candidate_id] })).toThrow(/title of active spec S-20260102-bbbb.*--as supersede --target S-20260102-bbbb/);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(promote(lc, p.root, 's-1', { all: true }).skipped_blocked.map((b) => b.candidate_id)).toEqual([candidate.candidate_id]);
    expect(readFileSync(file, 'utf8')).toBe(before);
    resolveCandidate(lc, p.root, 's-1', { candidate: candidate.candidate_id, as: 'supersede', target: 'S-20260102-bbbb', reason: 'one retry rule for both' });
    const r = promote(lc, p.root, 's-1', { candidates: [candidate.candidate_id] });
    expect(r.promoted[0]).toMatchObject({ outcome: 'created', supersedes: 'S-20260102-bbbb' });
    const entries = parseSpecText(readFileSync(file, 'utf8'), 'coding-conventions.md').entries;
    expect(entries.filter((e) => e.title === 'Retry budget').map((e) => e.status)).toEqual(['deprecated', 'active']);
  });
});
