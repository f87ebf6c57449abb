/** What a sandboxed agent's scratch run folder gives back to the run's ledger, and what it does not. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { emptyLedger, readLedger, stageInto, type Ledger } from '../knowledge/lifecycle/ledger/ledger.js';
import { agentRunFolder, removeRunScratch } from './agentRunFolder.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A run directory with run.json and a ledger holding one pending candidate and one load. */
function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-runfolder-'));
  dirs.push(dir, `${dir}.scratch`);
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ schema_version: 'run/1.0', run_id: 'e1', session_id: 'task-t1', status: 'running', sealed_at: null }));
  const l = emptyLedger('task-t1', 'e1', '2026-12-01T00:00:00.000Z');
  stageInto(l, { target: 'knowhow', action: 'propose', title: 'Old', content: 'The old finding.', category: null, source_kind: 'manual', evidence_refs: [] }, l.created_at, 'x');
  l.inputs.push({ knowledge_id: 'knowhow-tip-a', signal: 'consumed', source: 'load', count: 1, first_recorded_at: l.created_at, last_recorded_at: l.created_at });
  writeFileSync(join(dir, 'knowledge-delta.json'), JSON.stringify(l));
  return dir;
}

const scratchLedger = (scratch: string): Ledger => JSON.parse(readFileSync(join(scratch, 'knowledge-delta.json'), 'utf8'));
const write = (scratch: string, l: Ledger) => writeFileSync(join(scratch, 'knowledge-delta.json'), JSON.stringify(l));

describe('agentRunFolder', () => {
  it("keeps a run's scratch folders beside its directory: a killed worker's go at the run's next call, the others with the last call", () => {
    const dir = runDir();
    const root = `${dir}.scratch`;
    mkdirSync(join(root, 'call-killed'), { recursive: true }); // a worker killed mid-call left it
    const first = agentRunFolder(dir);
    expect(readdirSync(root)).toEqual([first.scratch.slice(root.length + 1)]);
    const second = agentRunFolder(dir); // the run's reviews call side by side
    expect(existsSync(first.scratch)).toBe(true);
    first.remove();
    expect(readdirSync(root)).toEqual([second.scratch.slice(root.length + 1)]);
    second.remove();
    expect(existsSync(root)).toBe(false);
    agentRunFolder(dir);
    removeRunScratch(dir); // the daemon's, once it has killed the run's worker
    expect(existsSync(root)).toBe(false);
  });

  it('gives the agent copies of run.json and the ledger, and carries back its new loads and candidates, pending', () => {
    const dir = runDir();
    const f = agentRunFolder(dir);
    dirs.push(f.scratch);
    expect(readFileSync(join(f.scratch, 'run.json'), 'utf8')).toBe(readFileSync(join(dir, 'run.json'), 'utf8'));
    const l = scratchLedger(f.scratch);
    l.inputs[0]!.count = 3; // two more loads of the same entry
    l.inputs.push({ knowledge_id: 'knowhow-tip-b', signal: 'consumed', source: 'load', count: 1, first_recorded_at: l.created_at, last_recorded_at: l.created_at });
    const added = stageInto(l, { target: 'spec', action: 'propose', title: 'New', content: 'A new rule.', category: 'coding', source_kind: 'manual', evidence_refs: ['run:e1'] }, l.created_at, 'x');
    added.status = 'promoted'; // an agent cannot promote by writing the file
    l.candidates[0]!.status = 'rejected'; // nor decide what the ledger already held
    write(f.scratch, l);
    expect(f.settle()).toBeNull();
    const after = readLedger(join(dir, 'knowledge-delta.json'))!;
    expect(after.inputs.map((i) => [i.knowledge_id, i.count])).toEqual([['knowhow-tip-a', 3], ['knowhow-tip-b', 1]]);
    expect(after.candidates.map((c) => [c.title, c.status])).toEqual([['Old', 'pending'], ['New', 'pending']]);
  });

  it('keeps nothing from a scratch ledger that is a link or not a ledger, and says why', () => {
    const dir = runDir();
    const before = readFileSync(join(dir, 'knowledge-delta.json'), 'utf8');
    const linked = agentRunFolder(dir);
    dirs.push(linked.scratch);
    rmSync(join(linked.scratch, 'knowledge-delta.json'));
    symlinkSync(join(dir, 'run.json'), join(linked.scratch, 'knowledge-delta.json'));
    expect(linked.settle()).toMatch(/not kept: knowledge-delta.json in its run folder is not a file/);
    const corrupt = agentRunFolder(dir);
    dirs.push(corrupt.scratch);
    writeFileSync(join(corrupt.scratch, 'knowledge-delta.json'), '{"schema_version": "run-ledger/9"}');
    expect(corrupt.settle()).toMatch(/not kept: .*knowledge-delta.json: field schema_version must be one of/);
    expect(readFileSync(join(dir, 'knowledge-delta.json'), 'utf8')).toBe(before);
  });

  it("keeps what an agent could add through its tools, and refuses a ledger past that: too big, too many entries, too long a candidate", () => {
    const dir = runDir();
    const before = readFileSync(join(dir, 'knowledge-delta.json'), 'utf8');
    const huge = agentRunFolder(dir);
    dirs.push(huge.scratch);
    writeFileSync(join(huge.scratch, 'knowledge-delta.json'), ' '.repeat(5 * 1024 * 1024));
    expect(huge.settle()).toMatch(/not kept: knowledge-delta.json in its run folder is 5242880 bytes, more than 4194304/);
    expect(readFileSync(join(dir, 'knowledge-delta.json'), 'utf8')).toBe(before);

    const many = agentRunFolder(dir);
    dirs.push(many.scratch);
    const l = scratchLedger(many.scratch);
    for (let i = 0; i < 1005; i++) l.inputs.push({ knowledge_id: `knowhow-tip-${i}`, signal: 'consumed', source: 'load', count: 1, first_recorded_at: l.created_at, last_recorded_at: l.created_at });
    for (let i = 0; i < 102; i++) stageInto(l, { target: 'knowhow', action: 'propose', title: `Tip ${i}`, content: `Finding ${i}.`, category: null, source_kind: 'manual', evidence_refs: [] }, l.created_at, 'x');
    stageInto(l, { target: 'knowhow', action: 'propose', title: 'Long', content: 'x'.repeat(8001), category: null, source_kind: 'manual', evidence_refs: [] }, l.created_at, 'x');
    write(many.scratch, l);
    expect(many.settle()).toBe('Knowledge records the agent made were refused: 5 of 1005 loaded entries (more than 1000 in one call); "Long": a title over 200 characters or content over 8000; 2 of 102 candidates (more than 100 in one call)');
    const after = readLedger(join(dir, 'knowledge-delta.json'))!;
    expect(after.inputs).toHaveLength(1 + 1000);
    expect(after.candidates.map((c) => c.title)).toEqual(['Old', ...Array.from({ length: 100 }, (_, i) => `Tip ${i}`)]);
  });
});
