import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../__fixtures__/transcript-builder.js';
import { migrateWikiLayout } from './migrate.js';
import { moveError, moveNoClobber, MovePlan } from './migrateMoves.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function thrown(fn: () => void): NodeJS.ErrnoException {
  try {
    fn();
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  throw new Error('expected a throw');
}

describe('moveNoClobber: a move never replaces what is at its destination', () => {
  it('refuses a file whose destination appeared after planning, and a folder onto a folder (even an empty one)', () => {
    const a = write(join(dir.path, 'a.md'), 'mine');
    const b = write(join(dir.path, 'b.md'), 'theirs');
    expect(thrown(() => moveNoClobber(a, b)).code).toBe('EEXIST');
    expect([readFileSync(a, 'utf8'), readFileSync(b, 'utf8')]).toEqual(['mine', 'theirs']);

    write(join(dir.path, 'src/errors/E001.md'), 'old error');
    mkdirSync(join(dir.path, 'dst/errors'), { recursive: true });
    expect(thrown(() => moveNoClobber(join(dir.path, 'src/errors'), join(dir.path, 'dst/errors'))).code).toBe('EEXIST');
    expect(readFileSync(join(dir.path, 'src/errors/E001.md'), 'utf8')).toBe('old error');

    moveNoClobber(a, join(dir.path, 'new/a.md'));
    expect(existsSync(a)).toBe(false);
    expect(readFileSync(join(dir.path, 'new/a.md'), 'utf8')).toBe('mine');
  });

  it('says what could not move, where to, why in words, and how far the migration got', () => {
    const err = moveError(Object.assign(new Error('EEXIST: file already exists, link'), { code: 'EEXIST' }), '/w/runtime/s1.json', '/w/sessions/s1.json', { done: 2, total: 5 });
    expect(err.code).toBe('ALREADY_EXISTS');
    expect(err.message).toBe(
      'Could not move /w/runtime/s1.json to /w/sessions/s1.json: something is there now that was not when the migration was planned; nothing was overwritten (EEXIST). 2 of 5 move(s) were done before this and stay done; `maestro wiki migrate --dry-run` shows what is left.',
    );
    expect(moveError(Object.assign(new Error('EXDEV'), { code: 'EXDEV' }), '/a', '/b', { done: 0, total: 1 }).message).toMatch(/^Could not move \/a to \/b: the two are on different file systems.*\(EXDEV\)\. nothing was moved \(0 of 1\);/);
  });
});

describe('MovePlan: one destination, one item', () => {
  it('makes a second claim on a destination, on a folder holding one, or inside one, a conflict', () => {
    const plan = new MovePlan([]);
    plan.add('trash', '/w/kb/errors', '/w/trash/errors');
    plan.add('move', '/w/x.md', '/w/trash/errors/x.md');
    plan.add('move', '/w/y', '/w/trash');
    plan.add('move', '/w/kb/errors/E1.md', '/w/z.md');
    expect(plan.items).toEqual([
      { action: 'trash', from: '/w/kb/errors', to: '/w/trash/errors' },
      { action: 'conflict', from: '/w/x.md', to: '/w/trash/errors/x.md', note: '/w/kb/errors goes to /w/trash/errors in this migration; left in place' },
      { action: 'conflict', from: '/w/y', to: '/w/trash', note: '/w/kb/errors goes inside it in this migration; left in place' },
      { action: 'conflict', from: '/w/kb/errors/E1.md', to: '/w/z.md', note: 'already moved by another item of this migration' },
    ]);
  });

  it('moves into a folder reached through a symbolic link, and not past a file where a folder should be', () => {
    mkdirSync(join(dir.path, 'elsewhere/knowledge'), { recursive: true });
    symlinkSync(join(dir.path, 'elsewhere'), join(dir.path, 'wiki'));
    write(join(dir.path, 'notes'), 'a file, not a folder');
    const plan = new MovePlan([]);
    plan.add('move', '/kb/C001.md', join(dir.path, 'wiki/knowledge/C001.md'));
    plan.add('move', '/kb/C002.md', join(dir.path, 'notes/C002.md'));
    expect(plan.items.map((i) => [i.action, i.note])).toEqual([
      ['move', undefined],
      ['conflict', `${join(dir.path, 'notes')} is not a folder; left in place`],
    ]);
  });
});

describe('wiki migrate run twice', () => {
  it('does not merge a cache whose name an earlier migration already keeps in sessions/.migrated/: both originals stay', () => {
    const wiki = join(dir.path, 'wiki');
    const now = new Date('2026-11-20T10:00:00.000Z');
    write(join(wiki, 'sessions/s9-summaries.json'), JSON.stringify({ exp_1: { text: 'first' } }));
    migrateWikiLayout(wiki, { workspaceRoot: dir.path, now });
    write(join(wiki, 'sessions/s9-summaries.json'), JSON.stringify({ exp_2: { text: 'second' } }));
    const again = migrateWikiLayout(wiki, { workspaceRoot: dir.path, now });
    expect(again.items).toEqual([
      {
        action: 'conflict',
        from: join(wiki, 'sessions/s9-summaries.json'),
        to: join(wiki, 'sessions/.migrated/s9-summaries.json'),
        note: 'summaries: destination exists; cache not merged, left in place',
      },
    ]);
    expect(readdirSync(join(wiki, 'sessions/.migrated'))).toEqual(['s9-summaries.json']);
    expect(JSON.parse(readFileSync(join(wiki, 'sessions/.migrated/s9-summaries.json'), 'utf8'))).toEqual({ exp_1: { text: 'first' } });
    expect(JSON.parse(readFileSync(join(wiki, 'sessions/s9-summaries.json'), 'utf8'))).toEqual({ exp_2: { text: 'second' } });
  });
});

describe('a legacy cache file that is not JSON', () => {
  it('is a conflict naming the place only, left in place, and quoting nothing of it', () => {
    const wiki = join(dir.path, 'wiki');
    const now = new Date('2026-11-20T10:00:00.000Z');
    const cut = write(join(wiki, 'sessions/s8-summaries.json'), '{\n  "exp_1": {"text": "first"');
    // JSON.parse's own message would quote the start of the file: `Unexpected token 'T', "TOPSECRET-1234" is not valid JSON`.
    const secret = write(join(wiki, 'sessions/s9-summaries.json'), 'TOPSECRET-1234\n');
    const result = migrateWikiLayout(wiki, { workspaceRoot: dir.path, now });
    expect(result.items.map((i) => [i.action, i.from, i.note])).toEqual([
      ['conflict', cut, 'not valid JSON (it ends early, at line 2, column 28), left in place'],
      ['conflict', secret, 'not valid JSON (line 1, column 1), left in place'],
    ]);
    expect(JSON.stringify(result)).not.toContain('TOPSECRET');
    expect(readFileSync(secret, 'utf8')).toBe('TOPSECRET-1234\n');
  });
});
