/**
 * recordConsumed (what an explicit `maestro load` records), in the orchestrator's run directory
 * ($MAESTRO_RUN_DIR) or the active run (.workflow/sessions/.active-run): a run.json that is not a run,
 * or a ledger that does not read, is named in a warning and nothing is written; the load itself answers.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, tmpDir } from '../../../../test/helpers/knowledge2.js';
import { recordConsumed } from './ops.js';
import { createRun, createSession, runDir, setActiveRun } from './store.js';

const BROKEN = [
  ['[]', 'must hold a JSON object, found [].'],
  ['null', 'must hold a JSON object, found null.'],
  ['"x"', 'must hold a JSON object, found "x".'],
  ['{"run_id": ', 'not valid JSON ('],
];
const notRecorded = (file: string, why: string) => ({ recorded: false, warning: expect.stringContaining(`The load is not recorded as consumed in the run: ${file}: ${why}`) });

/** A project whose active run (named in .active-run, no environment) is s-1/run-1. */
function activeRunProject() {
  const p = project();
  createSession(p.root, 's-1');
  createRun(p.root, 's-1', { runId: 'run-1' });
  setActiveRun(p.root, 's-1', 'run-1');
  return { ...p, dir: runDir(p.root, 's-1', 'run-1') };
}

describe('recordConsumed into $MAESTRO_RUN_DIR', () => {
  it.each(BROKEN)('a run.json holding %s is named in a warning (the file and what is wrong), and nothing is written', (text, why) => {
    const p = project();
    const dir = tmpDir();
    const file = join(dir, 'run.json');
    writeFileSync(file, text);
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], { MAESTRO_RUN_DIR: dir })).toEqual(notRecorded(file, why));
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'knowledge-delta.json'))).toBe(false);
  });

  it('records the load in a run that reads', () => {
    const p = project();
    const dir = tmpDir();
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ schema_version: 'run/3.0', run_id: 'run-1', session_id: 's-1', status: 'running', sealed_at: null }));
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], { MAESTRO_RUN_DIR: dir })).toEqual({ recorded: true, warning: null });
    const ledger = JSON.parse(readFileSync(join(dir, 'knowledge-delta.json'), 'utf8'));
    expect(ledger).toMatchObject({ session_id: 's-1', run_id: 'run-1', inputs: [{ knowledge_id: 'S-20260101-aaaa', signal: 'consumed', source: 'load' }] });
  });
});

describe('recordConsumed into the active run (.active-run)', () => {
  it.each(BROKEN)('a run.json holding %s is named in a warning as in $MAESTRO_RUN_DIR, and nothing is written', (text, why) => {
    const p = activeRunProject();
    const file = join(p.dir, 'run.json');
    writeFileSync(file, text);
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], {})).toEqual(notRecorded(file, why));
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(join(p.dir, 'knowledge-delta.json'))).toBe(false);
  });

  it('a ledger that does not read is named in a warning, in either place, and left as it was', () => {
    const p = activeRunProject();
    const ledger = join(p.dir, 'knowledge-delta.json');
    writeFileSync(ledger, 'null');
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], {})).toEqual(notRecorded(ledger, 'must hold a JSON object, found null.'));
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], { MAESTRO_RUN_DIR: p.dir })).toEqual(notRecorded(ledger, 'must hold a JSON object, found null.'));
    expect(readFileSync(ledger, 'utf8')).toBe('null');
  });

  it('records the load in a run that reads; a run that is gone is no active run, without a word', () => {
    const p = activeRunProject();
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], {})).toEqual({ recorded: true, warning: null });
    expect(JSON.parse(readFileSync(join(p.dir, 'knowledge-delta.json'), 'utf8')).inputs).toEqual([expect.objectContaining({ knowledge_id: 'S-20260101-aaaa', signal: 'consumed', source: 'load' })]);
    setActiveRun(p.root, 's-1', 'run-gone');
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], {})).toEqual({ recorded: false, warning: null });
  });
});
