/**
 * recordConsumed (what an explicit `maestro load` records): a run.json in the orchestrator's run
 * directory ($MAESTRO_RUN_DIR) that is not a run is a corrupt file, named, and nothing is written.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, tmpDir } from '../../../../test/helpers/knowledge2.js';
import { recordConsumed } from './ops.js';

describe('recordConsumed into $MAESTRO_RUN_DIR', () => {
  it.each([
    ['[]', 'must hold a JSON object, found [].'],
    ['null', 'must hold a JSON object, found null.'],
    ['"x"', 'must hold a JSON object, found "x".'],
    ['{"run_id": ', 'not valid JSON ('],
  ])('a run.json holding %s is refused as CORRUPT_FILE naming the file, and nothing is written', (text, why) => {
    const p = project();
    const dir = tmpDir();
    const file = join(dir, 'run.json');
    writeFileSync(file, text);
    expect(() => recordConsumed(p.root, ['S-20260101-aaaa'], { MAESTRO_RUN_DIR: dir })).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: expect.stringContaining(`${file}: ${why}`), details: { file } }),
    );
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'knowledge-delta.json'))).toBe(false);
  });

  it('records the load in a run that reads', () => {
    const p = project();
    const dir = tmpDir();
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ schema_version: 'run/3.0', run_id: 'run-1', session_id: 's-1', status: 'running', sealed_at: null }));
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], { MAESTRO_RUN_DIR: dir })).toBe(true);
    const ledger = JSON.parse(readFileSync(join(dir, 'knowledge-delta.json'), 'utf8'));
    expect(ledger).toMatchObject({ session_id: 's-1', run_id: 'run-1', inputs: [{ knowledge_id: 'S-20260101-aaaa', signal: 'consumed', source: 'load' }] });
  });
});
