import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseEntryFile } from '../../knowledge/format/wiki/entries.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../__fixtures__/transcript-builder.js';
import { createEntry, updateEntry, type WriteContext } from './writer.js';
import { writeBundle } from '../bundle/store.js';
import { createEmptyBundle } from '../bundle/types.js';

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

  it('refuses an entry whose tags open a map they never finish, naming the line, rather than turning `{{{` into a tag', () => {
    const entry = createEntry({ type: 'context', slug: 'pool-size', request: 'Size the pool', summary: 'Ten.', solution: 'Set ten.' }, ctx);
    writeFileSync(entry.path, readFileSync(entry.path, 'utf8').replace(/^tags:\n(?:\s+- .*\n)*/m, 'tags: {{{\n'));
    const before = readFileSync(entry.path);
    const line = before.toString('utf8').split('\n').indexOf('tags: {{{') + 1;
    const later = { ...ctx, source: { sessionId: 's2', explorationId: 'exp_2' } };
    expect(() => updateEntry(entry, { solution: 'Also cap it.', tags: ['pool'] }, later)).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: `target_unreadable: ${entry.path} (line ${line}: tags: the value "{{{" opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)); not updating it.` }),
    );
    expect(readFileSync(entry.path)).toEqual(before);
  });

  it('an entity is numbered past a folder named like a note in notes/, which is not read', () => {
    const first = createEntry({ type: 'entity', slug: 'token-cache', request: 'What caches tokens', summary: 'The token cache.', solution: 'n/a' }, ctx);
    mkdirSync(join(wikiLayout(dir.path).notes, 'stray.md'), { recursive: true });
    const second = createEntry({ type: 'entity', slug: 'key-store', request: 'Where keys live', summary: 'The key store.', solution: 'n/a' }, ctx);
    expect([first.id, second.id]).toEqual(['N001', 'N002']);
  });

  /** A note a person annotated by hand: comments, blank lines, keys Maestro never writes, their own quoting. */
  const ANNOTATED = [
    '---',
    '# Reviewed by Ana on 2026-07-02: keep the request wording.',
    'id: C001',
    'slug: login-token',
    "request: 'Fix the login token'",
    'created: 2026-07-01',
    '',
    '# -- bookkeeping below is written by the observer --',
    'updated: "2026-07-01T09:00:00Z"',
    'version: 3',
    'type: context',
    'tags:',
    '  - auth',
    '  # the scope tag below was added by hand',
    '  - proj:app',
    'sources:',
    '  - session_id: "s0"',
    '    # first seen in the pairing session',
    '    exploration_id: "exp_9"',
    "    saved_at: '2026-07-01T09:00:00Z'",
    'reviewer:',
    '  name: ana',
    '  checked: 2026-07-02',
    'links: [https://x.test/a]',
    'extraction_confidence: 0.7',
    'status: active',
    '# end of the reviewed block',
    '---',
    '',
    '# Fix the login token',
    '',
    '## 解决方案',
    '',
    'Refresh them.',
    '',
  ].join('\n');

  function annotatedNote(text: string) {
    const knowledge = wikiLayout(dir.path).knowledge;
    const path = join(knowledge, 'contexts', 'debug', 'C001-login-token.md');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    const { entry } = parseEntryFile(path, knowledge, text, statSync(path));
    return entry!;
  }

  /** What the update must write: the two changed lines, one sources item appended, the dated block; nothing else. */
  const UPDATED = ANNOTATED.replace('updated: "2026-07-01T09:00:00Z"', 'updated: "2026-08-01T10:00:00Z"')
    .replace('version: 3', 'version: 4')
    .replace(
      "    saved_at: '2026-07-01T09:00:00Z'\n",
      `    saved_at: '2026-07-01T09:00:00Z'\n  - session_id: "s1"\n    exploration_id: "exp_1"\n    saved_at: "2026-08-01T10:00:00Z"\n`,
    )
    .replace('Refresh them.\n', 'Refresh them.\n\n### 更新 2026-08-01 (exp_1)\n\nAlso rotate the key.\n\n');

  it("leaves a page a person saves while it is being updated as they saved it: KNOWLEDGE_CONFLICT, nothing written", () => {
    const entry = annotatedNote(ANNOTATED);
    const theirs = `${ANNOTATED}\nA line the person added.\n`;
    // Their editor saves after the observer read the page, before its new text replaces it.
    const during = { ...ctx, beforeRename: () => writeFileSync(entry.path, theirs) };
    expect(() => updateEntry(entry, { solution: 'Also rotate the key.' }, during)).toThrow(
      expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT', message: `${entry.path} changed while Maestro was writing it (another program saved it after Maestro read it): nothing was written, and the file is as that program left it. Run the command again.` }),
    );
    expect(readFileSync(entry.path, 'utf8')).toBe(theirs);
    expect(readdirSync(dirname(entry.path)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps the comments, blank lines, unknown keys and quoting a person wrote, changing only the keys it updates', () => {
    const entry = annotatedNote(ANNOTATED);
    const updated = updateEntry(entry, { solution: 'Also rotate the key.' }, ctx);
    expect(readFileSync(entry.path, 'utf8')).toBe(UPDATED);
    expect(updated).toMatchObject({ version: 4, updated: '2026-08-01T10:00:00Z', tags: ['auth', 'proj:app'] });
    expect(updated.sources.map((s) => s.explorationId)).toEqual(['exp_9', 'exp_1']);
  });

  it('reads a version with a comment after it as its number, as GUI-Anything does, and counts on from it', () => {
    const entry = annotatedNote(ANNOTATED.replace('version: 3', 'version: 3 # bumped by hand'));
    expect(entry.version).toBe(3);
    expect(updateEntry(entry, { solution: 'Also rotate the key.' }, ctx).version).toBe(4);
    expect(readFileSync(entry.path, 'utf8')).toContain('\nversion: 4\n');
  });

  it('keeps a CRLF note CRLF, every line of it', () => {
    const entry = annotatedNote(ANNOTATED.replace(/\n/g, '\r\n'));
    updateEntry(entry, { solution: 'Also rotate the key.' }, ctx);
    expect(readFileSync(entry.path, 'utf8')).toBe(UPDATED.replace(/\n/g, '\r\n'));
  });

  it('keeps a sources value it does not understand as the first item of the list, and tags as written: a number stays a number', () => {
    const text = ANNOTATED.replace(/^sources:\n(  [^\n]*\n)+/m, 'sources: "imported from GA run 7"\n').replace(/^tags:\n(  [^\n]*\n)+/m, 'tags: [a, 2024]\n');
    const entry = annotatedNote(text);
    updateEntry(entry, { solution: 'Also rotate the key.', tags: ['tokens', '2024'] }, ctx);
    const written = readFileSync(entry.path, 'utf8');
    expect(written).toContain(
      [
        'tags:', '  - "a"', '  - 2024', '  - "tokens"', '  - "proj:app"',
        'sources:', '  - "imported from GA run 7"', '  - session_id: "s1"', '    exploration_id: "exp_1"', '    saved_at: "2026-08-01T10:00:00Z"', 'reviewer:',
      ].join('\n'),
    );
    // A lone tag that is a number is kept too (it was dropped: only a list or a text counted).
    const lone = annotatedNote(text.replace('tags: [a, 2024]', 'tags: 2024'));
    expect(updateEntry(lone, { solution: 'Also rotate the key.' }, ctx).tags).toEqual(['2024', 'proj:app']);
    expect(readFileSync(lone.path, 'utf8')).toContain('tags:\n  - 2024\n  - "proj:app"\n');
  });

  it('rewrites a changed key where it stood, appends a new key at the end of the block, and leaves the rest alone', () => {
    const text = ANNOTATED.replace('tags:\n  - auth\n  # the scope tag below was added by hand\n  - proj:app\n', 'tags: [auth]\n');
    const entry = annotatedNote(text);
    updateEntry(entry, { solution: 'Also rotate the key.', tags: ['tokens'], confidence: 0.9 }, { ...ctx, intentKey: 'debug' });
    const written = readFileSync(entry.path, 'utf8');
    const head = written.slice(0, written.indexOf('\n---\n') + 5);
    // The inline list is not one the new tags extend line by line: it is written again, in the writer's style, where it stood.
    expect(head).toBe(
      UPDATED.slice(0, UPDATED.indexOf('\n---\n') + 5)
        .replace('tags:\n  - auth\n  # the scope tag below was added by hand\n  - proj:app\n', 'tags:\n  - "auth"\n  - "tokens"\n  - "proj:app"\n')
        .replace('extraction_confidence: 0.7\n', 'extraction_confidence: 0.9\n')
        .replace('# end of the reviewed block\n---\n', '# end of the reviewed block\nintent_key: "debug"\n---\n'),
    );
  });
});

describe('wiki writes and links', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  it('refuses a new entry whose folder a repository made a link out of the wiki, writing nothing there', () => {
    const wiki = join(dir.path, 'repo', 'wiki');
    const outside = join(dir.path, 'outside');
    mkdirSync(join(wiki, 'knowledge'), { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, join(wiki, 'knowledge', 'entities'));
    const ctx: WriteContext = { wikiRoot: wiki, projectSlug: 'app', source: { sessionId: 's1', explorationId: 'exp_1' }, now: new Date('2026-08-01T10:00:00Z') };
    expect(() => createEntry({ type: 'entity', slug: 'pool', request: 'Size the pool', summary: 'Ten.', solution: 'Set ten.' }, ctx)).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining(`outside the wiki ${wiki}`) }),
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a session bundle (a person\'s prompts and answers) whose sessions folder is a link out of the wiki', () => {
    const layout = wikiLayout(join(dir.path, 'repo', 'wiki'));
    const outside = join(dir.path, 'repo', 'docs');
    mkdirSync(layout.root, { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, layout.sessions);
    const bundle = createEmptyBundle({ sessionId: 's', workspaceRoot: dir.path, jsonlPath: join(dir.path, 's.jsonl'), jsonlMtime: 0 }, 1);
    expect(() => writeBundle(layout, bundle)).toThrow(expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining('is a symbolic link leading to') }));
    expect(readdirSync(outside)).toEqual([]);
  });
});
