import { copyFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectWal } from './walCheck.js';

describe('inspectWal', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A database and the log SQLite wrote for it (copied while the handle is open: closing deletes the log). */
  function withLog(pageSize: number): string {
    const dir = mkdtempSync(join(tmpdir(), 'maestro-wal-'));
    dirs.push(dir);
    const live = join(dir, 'live.db');
    const db = new Database(live);
    try {
      db.pragma(`page_size = ${pageSize}`);
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (x TEXT)');
      for (let i = 0; i < 20; i++) db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(300));
      copyFileSync(live, join(dir, 'copy.db'));
      copyFileSync(`${live}-wal`, join(dir, 'copy.db-wal'));
    } finally {
      db.close();
    }
    return join(dir, 'copy.db');
  }

  const patch = (file: string, at: number, bytes: number[]) => {
    const b = readFileSync(file);
    bytes.forEach((v, i) => (b[at + i] = v));
    writeFileSync(file, b);
  };

  it('takes the logs SQLite writes, at the smallest and largest page sizes', () => {
    for (const size of [512, 4096, 65536]) expect(inspectWal(withLog(size))).toEqual({ state: 'ok' });
  });

  it('names what is wrong with a damaged header', () => {
    const db = withLog(4096);
    patch(`${db}-wal`, 16, [0xff]); // a salt byte: only the checksum sees it
    expect(inspectWal(db)).toEqual({ state: 'damaged', detail: 'its header checksum does not match' });
    patch(`${db}-wal`, 4, [0, 0, 0, 1]);
    expect(inspectWal(db)).toEqual({ state: 'damaged', detail: 'its header names format version 1, not 3007000' });
    truncateSync(`${db}-wal`, 20);
    expect(inspectWal(db)).toEqual({ state: 'damaged', detail: 'it is 20 bytes, shorter than the 32-byte header' });
  });

  it('says where a log cut short ends', () => {
    const db = withLog(4096);
    const size = readFileSync(`${db}-wal`).length;
    truncateSync(`${db}-wal`, size - 100);
    expect(inspectWal(db)).toEqual({ state: 'torn', size: size - 100, whole: (size - 32) / 4120 - 1, extra: 4120 - 100, frameBytes: 4120 });
  });

  it('a missing or empty log is none', () => {
    const db = withLog(4096);
    expect(inspectWal(join(db, '..', 'other.db'))).toEqual({ state: 'none' });
    truncateSync(`${db}-wal`, 0);
    expect(inspectWal(db)).toEqual({ state: 'none' });
  });
});
