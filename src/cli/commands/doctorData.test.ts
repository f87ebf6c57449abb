/** `maestro doctor`'s home check says what is wrong with the home, not only that it cannot be written. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkHome } from './doctorData.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('checkHome', () => {
  it('names a home that is a file, or lies under one, as a file, not as a disk to remount', () => {
    dir = mkdtempSync(join(tmpdir(), 'maestro-doctor-'));
    const file = join(dir, 'home');
    writeFileSync(file, '');
    expect(checkHome(file)).toEqual({ name: 'home', status: 'fail', detail: `${file} is a file, not a folder: set MAESTRO_HOME (or --home) to a folder` });
    expect(checkHome(join(file, 'sub'))).toEqual({ name: 'home', status: 'fail', detail: `${file} is a file, not a folder: set MAESTRO_HOME (or --home) to a folder (${join(file, 'sub')} would be made inside it)` });
    expect(checkHome(join(dir, 'new'))).toMatchObject({ name: 'home', status: 'ok' });
  });
});
