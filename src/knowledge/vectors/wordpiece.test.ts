import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readVocab } from './wordpiece.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-vocab-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a tokenizer.json that is not JSON', () => {
  it('is refused naming the file and the place, and quoting nothing of it', () => {
    const file = join(dir, 'tokenizer.json');
    writeFileSync(file, '{\n  "model": {\n    "type": WordPiece\n  }\n}\n');
    expect(() => readVocab(file)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: `${file} is not valid JSON (line 3, column 13).` }));
    // JSON.parse's own message would quote the start of the file: `Unexpected token 'T', "TOPSECRET-1234" is not valid JSON`.
    writeFileSync(file, 'TOPSECRET-1234\n');
    let refused: Error | undefined;
    try {
      readVocab(file);
    } catch (err) {
      refused = err as Error;
    }
    expect(refused?.message).toBe(`${file} is not valid JSON (line 1, column 1).`);
    expect(`${refused?.message} ${String(refused?.cause)}`).not.toContain('TOPSECRET');
  });
});
