/**
 * readPatch against what a hostile agent can commit on its branch: names that are not UTF-8, a binary file turned
 * into a symlink, and a change drawn in millions of lines. Each asserts what the person is shown.
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { LISTING_LINES, readPatch, type DiffFile } from './patch.js';

afterEach(() => removeTempDirs());

/** A path in `repo` whose name holds `odd`, a byte that is not UTF-8 on its own. */
const oddPath = (repo: string, before: string, odd: number, after: string) => Buffer.concat([Buffer.from(`${repo}/${before}`), Buffer.from([odd]), Buffer.from(after)]);
const added = (f: DiffFile | undefined) => f?.hunks.flatMap((h) => h.lines.filter((l) => l.kind === 'add').map((l) => l.text));

function commitTopic(repo: string, change: () => void): void {
  git(repo, 'checkout', '-q', '-b', 'topic');
  change();
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'hostile');
}

describe('readPatch, hostile content', () => {
  it('keeps apart two names that are not UTF-8, shows each as git quotes it, and loads each by that name', async () => {
    const repo = makeRepo();
    commitTopic(repo, () => {
      writeFileSync(oddPath(repo, 'n', 0xff, '.txt'), 'benign\n');
      writeFileSync(oddPath(repo, 'n', 0xfe, '.txt'), 'EVIL\n');
      writeFileSync(oddPath(repo, 'big', 0xff, '.txt'), 'x\n'.repeat(3000));
    });
    const by = Object.fromEntries((await readPatch(repo, 'main', 'topic')).map((f) => [f.path, f]));
    // Read as UTF-8, both names were "n\uFFFD.txt", and each showed both files' lines.
    expect(Object.keys(by).sort()).toEqual(['"big\\377.txt"', '"n\\376.txt"', '"n\\377.txt"']);
    expect(added(by['"n\\377.txt"'])).toEqual(['benign']);
    expect(added(by['"n\\376.txt"'])).toEqual(['EVIL']);
    expect(by['"big\\377.txt"']).toMatchObject({ collapsed: true, additions: 3000, hunks: [] });
    // Asked for whole, it came back empty (no hunks, not collapsed): "Empty file" on the board.
    const [big] = await readPatch(repo, 'main', 'topic', { file: '"big\\377.txt"' });
    expect(big).toMatchObject({ collapsed: false, additions: 3000 });
    expect(added(big)).toHaveLength(3000);
  });

  it('shows a file the glob for an odd name takes in as its own, not as a rename of it', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const repo = makeRepo({ 'n1.txt': `${lines.join('\n')}\n` });
    commitTopic(repo, () => {
      git(repo, 'mv', 'n1.txt', 'other.txt');
      writeFileSync(oddPath(repo, 'n', 0xff, '.txt'), `${lines.map((l) => (l === 'line 10' ? 'EVIL 10' : l)).join('\n')}\n`);
    });
    const [file] = await readPatch(repo, 'main', 'topic', { file: '"n\\377.txt"' });
    // Its glob `n*.txt` took in n1.txt, and git showed the new file as n1.txt renamed: line 10 and its context only.
    expect(file).toMatchObject({ status: 'added', collapsed: false, additions: 20 });
    expect(added(file)).toContain('EVIL 10');
    expect(added(file)).toContain('line 1');
  });

  it('shows the target of a symlink that replaced a binary file', async () => {
    const repo = makeRepo({ 'logo.png': '\x89PNG\0\0\x01\x02' });
    commitTopic(repo, () => {
      unlinkSync(join(repo, 'logo.png'));
      symlinkSync('/etc/passwd', join(repo, 'logo.png'));
    });
    const [file] = await readPatch(repo, 'main', 'topic');
    // The binary side hid the whole file: "Binary file: not shown", and not where the link points.
    expect(file).toMatchObject({ path: 'logo.png', status: 'type_changed', oldMode: '100644', newMode: '120000', binary: true, additions: 1 });
    expect(added(file)).toEqual(['/etc/passwd']);
  });

  it('draws at most LISTING_LINES lines of a whole change; the files after come collapsed, counted, and load whole', async () => {
    const repo = makeRepo();
    const files = Math.ceil(LISTING_LINES / 1500) + 2;
    commitTopic(repo, () => {
      for (let i = 0; i < files; i++) writeFileSync(join(repo, `gen${String(i).padStart(3, '0')}.txt`), `${i}\n`.repeat(1500));
    });
    const listing = await readPatch(repo, 'main', 'topic');
    const drawn = listing.reduce((n, f) => n + f.hunks.reduce((m, h) => m + h.lines.length, 0), 0);
    expect(drawn).toBeLessThanOrEqual(LISTING_LINES);
    expect(listing.every((f) => f.additions === 1500)).toBe(true);
    const last = listing[listing.length - 1]!;
    expect(last).toMatchObject({ collapsed: true, hunks: [] });
    expect(listing.filter((f) => !f.collapsed).length).toBeGreaterThan(0);
    const [whole] = await readPatch(repo, 'main', 'topic', { file: last.path });
    expect(whole).toMatchObject({ collapsed: false, additions: 1500 });
  });

  it("shows a change whole whatever the repository's git config says (an agent can write it)", async () => {
    const repo = makeRepo({ 'a.txt': 'a\n\nb\n' });
    commitTopic(repo, () => writeFileSync(join(repo, 'a.txt'), 'a\n\nc\n'));
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`);
    git(repo, 'commit', '-q', '-m', 'a gitlink');
    execFileSync('mkfifo', [join(repo, '.git/order')]); // git opened it to read, and waited for a writer for ever
    const config = [['diff.ignoreSubmodules', 'all'], ['diff.submodule', 'log'], ['core.bigFileThreshold', '1'], ['diff.suppressBlankEmpty', 'true'], ['diff.orderFile', join(repo, '.git/order')]];
    for (const [key, value] of config) git(repo, 'config', key!, value!);
    const by = Object.fromEntries((await readPatch(repo, 'main', 'topic')).map((f) => [f.path, f]));
    // The gitlink was not listed at all; a.txt was "binary", and without that its line c was numbered 2.
    expect(by['vendor/lib']).toMatchObject({ newMode: '160000', collapsed: false });
    expect(added(by['vendor/lib'])).toEqual([`Subproject commit ${'1'.repeat(40)}`]);
    expect(by['a.txt']).toMatchObject({ binary: false, additions: 1, deletions: 1 });
    expect(by['a.txt']!.hunks[0]!.lines).toEqual([
      { kind: 'context', text: 'a', oldLine: 1, newLine: 1 },
      { kind: 'context', text: '', oldLine: 2, newLine: 2 },
      { kind: 'del', text: 'b', oldLine: 3, newLine: null },
      { kind: 'add', text: 'c', oldLine: null, newLine: 3 },
    ]);
  });
});
