import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonObject } from './jsonFile.js';
import { tryReadReceipt } from './reconcile/receipt.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fileWith(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-json-'));
  dirs.push(dir);
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

describe('a lifecycle file that is not JSON', () => {
  it('is named with the place it goes wrong, and none of its content', () => {
    const file = fileWith('session.json', 'TOPSECRET key material\n');
    expect(() => readJsonObject(file)).toThrow(`${file}: not valid JSON (line 1, column 1).`);
    const cut = fileWith('session.json', '{\n  "session_id": "s-1",\n  "objective": "TOPSECRET" x\n}\n');
    expect(() => readJsonObject(cut)).toThrow(`${cut}: not valid JSON (line 3, column 28).`);
  });

  it('a receipt too: review shows why it is unreadable without quoting it', () => {
    const receiptPath = fileWith('knowledge-reconciliation.json', 'TOPSECRET\n');
    const { corrupt } = tryReadReceipt({ sid: 's-1', rid: 'session', dir: join(receiptPath, '..'), ledgerPath: '', receiptPath });
    expect(corrupt?.message).toBe(`${receiptPath}: not valid JSON (line 1, column 1); rebuild it: maestro knowledge review s-1 --refresh.`);
  });
});
