import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowRoot } from '../format/root.js';
import { ledgerSource } from './ledgerSource.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-ledgers-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a run ledger that is not JSON', () => {
  it('is a finding naming the file and the place, quoting nothing of it', () => {
    const file = join(dir, 'sessions', 's-1', 'knowledge-delta.json');
    mkdirSync(join(file, '..'), { recursive: true });
    const source = ledgerSource({ workflowDir: dir } as WorkflowRoot);
    writeFileSync(file, '{"session_id": "s-1", "inputs": [');
    expect(source.readFile(file).findings).toEqual([{ file, line: 1, severity: 'warning', code: 'invalid-knowledge-ledger', message: 'not valid JSON (it ends early, at line 1, column 34)' }]);
    // JSON.parse's own message would quote the start of the file: `Unexpected token 'T', "TOPSECRET-1234" is not valid JSON`.
    writeFileSync(file, 'TOPSECRET-1234\n');
    const read = source.readFile(file);
    expect(read.findings).toEqual([{ file, line: 1, severity: 'warning', code: 'invalid-knowledge-ledger', message: 'not valid JSON (line 1, column 1)' }]);
    expect(JSON.stringify(read)).not.toContain('TOPSECRET');
    // A ledger that parses still gives its edges.
    writeFileSync(file, JSON.stringify({ session_id: 's-1', inputs: [{ knowledge_id: 'K1', signal: 'consumed' }] }));
    expect(source.readFile(file)).toMatchObject({ findings: [], edges: [{ src: 'K1', rel: 'consumed-by', dst: 'task:s-1' }] });
  });
});
