/** readPatch against real git: odd file names, a missing final newline, a mode-only change, a file turned into a symlink. */
import { chmodSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { readPatch } from './patch.js';

afterEach(() => removeTempDirs());

describe('readPatch', () => {
  it('finds each file of a patch by its name: quoted names, pure renames, binary files and mode changes with odd names', async () => {
    const repo = makeRepo({ 'same.txt': 'unchanged content\n', 'tool b/x.sh': 'echo\n' });
    git(repo, 'checkout', '-q', '-b', 'topic');
    writeFileSync(join(repo, 'tab\there "q".txt'), 'x\n');
    git(repo, 'mv', 'same.txt', 'moved.txt');
    writeFileSync(join(repo, 'img a.png'), Buffer.from([0, 1, 2, 3, 255, 0]));
    chmodSync(join(repo, 'tool b/x.sh'), 0o755);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'odd names');
    const by = Object.fromEntries((await readPatch(repo, 'main', 'topic')).map((f) => [f.path, f]));
    expect(Object.keys(by).sort()).toEqual(['img a.png', 'moved.txt', 'tab\there "q".txt', 'tool b/x.sh']);
    expect(by['tab\there "q".txt']).toMatchObject({ status: 'added', additions: 1, hunks: [{ lines: [{ text: 'x' }] }] });
    expect(by['moved.txt']).toMatchObject({ status: 'renamed', oldPath: 'same.txt', additions: 0, deletions: 0, hunks: [] });
    expect(by['img a.png']).toMatchObject({ binary: true, hunks: [] });
    expect(by['tool b/x.sh']).toMatchObject({ status: 'modified', binary: false, hunks: [] });
  });

  it('keeps names with spaces and non-ASCII letters, line numbers across a missing final newline, and changes without hunks', async () => {
    const repo = makeRepo({ 'run.sh': 'echo hi\n', 'link-me.txt': 'target\n', 'notes.txt': 'a\nb' });
    git(repo, 'checkout', '-q', '-b', 'topic');
    writeFileSync(join(repo, 'my file ü.md'), 'one\n');
    writeFileSync(join(repo, 'notes.txt'), 'a\nb\nc\n');
    chmodSync(join(repo, 'run.sh'), 0o755);
    unlinkSync(join(repo, 'link-me.txt'));
    symlinkSync('run.sh', join(repo, 'link-me.txt'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'odd changes');

    const files = await readPatch(repo, 'main', 'topic');
    const by = Object.fromEntries(files.map((f) => [f.path, f]));
    expect(Object.keys(by).sort()).toEqual(['link-me.txt', 'my file ü.md', 'notes.txt', 'run.sh']);
    expect(by['my file ü.md']).toMatchObject({ status: 'added', additions: 1, hunks: [{ lines: [{ kind: 'add', text: 'one', newLine: 1 }] }] });
    expect(by['notes.txt']!.hunks[0]!.lines).toEqual([
      { kind: 'context', text: 'a', oldLine: 1, newLine: 1 },
      { kind: 'del', text: 'b', oldLine: 2, newLine: null, noNewline: true },
      { kind: 'add', text: 'b', oldLine: null, newLine: 2 },
      { kind: 'add', text: 'c', oldLine: null, newLine: 3 },
    ]);
    expect(by['notes.txt']).toMatchObject({ additions: 2, deletions: 1 });
    expect(by['run.sh']).toMatchObject({ status: 'modified', oldMode: '100644', newMode: '100755', additions: 0, deletions: 0, hunks: [] });
    expect(by['link-me.txt']).toMatchObject({ status: 'type_changed', oldMode: '100644', newMode: '120000' });
    expect(by['my file ü.md']).toMatchObject({ oldMode: null, newMode: '100644' });

    const one = await readPatch(repo, 'main', 'topic', { file: 'my file ü.md' });
    expect(one.map((f) => f.path)).toEqual(['my file ü.md']);
    expect(one[0]!.hunks[0]!.lines[0]!.text).toBe('one');
  });

  it('says which line ends without a newline, keeps a CR at a line end, and gives a symlink its mode', async () => {
    const repo = makeRepo({ 'trail.txt': 'a\nb\n', 'crlf.txt': 'a\n', 'gone.txt': 'x' });
    git(repo, 'checkout', '-q', '-b', 'topic');
    writeFileSync(join(repo, 'trail.txt'), 'a\nb');
    writeFileSync(join(repo, 'crlf.txt'), 'a\r\n');
    unlinkSync(join(repo, 'gone.txt'));
    symlinkSync('../../etc/passwd', join(repo, 'link'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'subtle');
    const by = Object.fromEntries((await readPatch(repo, 'main', 'topic')).map((f) => [f.path, f]));
    // Without the marker the two lines read the same: "-b" "+b".
    expect(by['trail.txt']!.hunks[0]!.lines.slice(1)).toEqual([
      { kind: 'del', text: 'b', oldLine: 2, newLine: null },
      { kind: 'add', text: 'b', oldLine: null, newLine: 2, noNewline: true },
    ]);
    expect(by['crlf.txt']!.hunks[0]!.lines.map((l) => l.text)).toEqual(['a', 'a\r']);
    expect(by['gone.txt']).toMatchObject({ status: 'deleted', oldMode: '100644', newMode: null, hunks: [{ lines: [{ kind: 'del', text: 'x', noNewline: true }] }] });
    expect(by['link']).toMatchObject({ status: 'added', oldMode: null, newMode: '120000', hunks: [{ lines: [{ kind: 'add', text: '../../etc/passwd', noNewline: true }] }] });
  });
});
