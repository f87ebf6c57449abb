import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openMigratedDatabase } from './open.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe('a SQLite database outside the home', () => {
  it('is created readable by its owner only (it holds every task, transcript and provider key), in folders only they can enter', async () => {
    const base = mkdtempSync(join(tmpdir(), 'maestro-open-'));
    dirs.push(base);
    const path = join(base, 'srv', 'maestro', 'maestro.db');
    const db = await openMigratedDatabase(`sqlite:${path}`);
    try {
      expect(mode(path).toString(8)).toBe('600');
      expect(mode(`${path}-wal`).toString(8)).toBe('600');
      expect(mode(join(base, 'srv')).toString(8)).toBe('700');
      expect(mode(join(base, 'srv', 'maestro')).toString(8)).toBe('700');
    } finally {
      await db.close();
    }
  });

  it('keeps the modes of a file and folder the person made', async () => {
    const base = mkdtempSync(join(tmpdir(), 'maestro-open-'));
    dirs.push(base);
    const path = join(base, 'shared.db');
    writeFileSync(path, '', { mode: 0o640 });
    const db = await openMigratedDatabase(`sqlite:${path}`);
    try {
      expect(mode(path).toString(8)).toBe('640');
      expect(mode(base).toString(8)).toBe('700');
    } finally {
      await db.close();
    }
  });
});
