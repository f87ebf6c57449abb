import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../__fixtures__/transcript-builder.js';
import { createEntry, updateEntry, type WriteContext } from './writer.js';

describe('updateEntry', () => {
  let dir: TempDir;
  let ctx: WriteContext;
  beforeEach(() => {
    dir = tempDir();
    ctx = { wikiRoot: dir.path, projectSlug: 'app', source: { sessionId: 's1', explorationId: 'exp_1' }, now: new Date('2026-08-01T10:00:00Z') };
  });
  afterEach(() => dir.cleanup());

  it('refuses an entry whose body holds bytes that are not UTF-8, naming the file, and leaves it byte for byte', () => {
    const entry = createEntry({ type: 'context', slug: 'login-token', request: 'Fix the login token', summary: 'Tokens expire.', solution: 'Refresh them.' }, ctx);
    // The 0xFF on the file's last line: read as UTF-8 it becomes U+FFFD, which a rewrite would keep.
    writeFileSync(entry.path, Buffer.concat([readFileSync(entry.path), Buffer.from('\nna'), Buffer.from([0xff]), Buffer.from('ve\n')]));
    const before = readFileSync(entry.path);
    const lastLine = before.toString('utf8').split('\n').length - 1;
    const later = { ...ctx, source: { sessionId: 's2', explorationId: 'exp_2' } };
    expect(() => updateEntry(entry, { solution: 'Also rotate the key.' }, later)).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: `target_unreadable: ${entry.path} (line ${lastLine}: file holds binary (NUL or invalid UTF-8) content); not updating it.` }),
    );
    expect(readFileSync(entry.path)).toEqual(before);
  });

  it('an entity is numbered past a folder named like a note in notes/, which is not read', () => {
    const first = createEntry({ type: 'entity', slug: 'token-cache', request: 'What caches tokens', summary: 'The token cache.', solution: 'n/a' }, ctx);
    mkdirSync(join(wikiLayout(dir.path).notes, 'stray.md'), { recursive: true });
    const second = createEntry({ type: 'entity', slug: 'key-store', request: 'Where keys live', summary: 'The key store.', solution: 'n/a' }, ctx);
    expect([first.id, second.id]).toEqual(['N001', 'N002']);
  });
});
