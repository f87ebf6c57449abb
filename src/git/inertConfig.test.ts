import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INERT_ALWAYS, inertArgsCache, inertDriverArgs } from './inertConfig.js';

const config = (pairs: Array<[string, string]>) => pairs.map(([k, v]) => `${k}\n${v}\0`).join('');

describe('inertDriverArgs', () => {
  it("empties a filter's commands, makes textconv cat and the external diff nothing, and merges with git's own merge", () => {
    const args = inertDriverArgs(config([['filter.strip.clean', 'sh tools/clean.sh'], ['diff.conv.textconv', './conv'], ['merge.mm.driver', 'sh m.sh %O %A %B']]));
    expect(args).toEqual([
      '-c', 'filter.strip.clean=', '-c', 'filter.strip.smudge=', '-c', 'filter.strip.process=',
      '-c', 'diff.conv.textconv=cat', '-c', 'diff.conv.command=',
      '-c', 'merge.mm.driver=git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B',
    ]);
  });

  it('keeps git-lfs and git-crypt as their installers write them, by name or absolute path, and nothing relative', () => {
    const kept = config([
      ['filter.lfs.clean', 'git-lfs clean -- %f'],
      ['filter.lfs.process', 'git-lfs filter-process'],
      ['filter.lfs2.clean', 'git lfs clean -- %f'],
      ['filter.git-crypt.smudge', '"git-crypt" smudge'],
      ['filter.crypt2.clean', '"/usr/local/bin/git-crypt" clean'],
    ]);
    expect(inertDriverArgs(kept)).toEqual([]);
    // A program in the tree by that name, a shell running one, or a kept program beside another: not kept.
    expect(inertDriverArgs(config([['filter.a.clean', './git-lfs clean'], ['filter.b.clean', 'sh git-lfs'], ['filter.c.clean', 'git-lfs clean'], ['filter.c.smudge', 'sh s.sh']])).filter((a) => a !== '-c')).toEqual([
      'filter.a.clean=', 'filter.a.smudge=', 'filter.a.process=',
      'filter.b.clean=', 'filter.b.smudge=', 'filter.b.process=',
      'filter.c.clean=', 'filter.c.smudge=', 'filter.c.process=',
    ]);
  });

  it('takes a driver name with dots whole', () => {
    expect(inertDriverArgs(config([['diff.my.tool.textconv', 'sh t.sh']]))).toEqual(['-c', 'diff.my.tool.textconv=cat', '-c', 'diff.my.tool.command=']);
  });
});

describe('inertArgsCache', () => {
  it("reads a repository's drivers once, again when its settings file changes, and never keeps a failed read", async () => {
    const root = mkdtempSync(join(tmpdir(), 'maestro-inert-'));
    try {
      mkdirSync(join(root, '.git'));
      writeFileSync(join(root, '.git', 'config'), '[core]\n');
      const answers: Array<string | null> = [null, config([['filter.x.clean', 'sh x.sh']]), config([['filter.y.clean', 'sh y.sh']])];
      let reads = 0;
      const args = inertArgsCache(async () => answers[reads++] as string | null);
      expect(await args(root, {})).toEqual(INERT_ALWAYS);
      expect(await args(root, {})).toContain('filter.x.clean=');
      expect(await args(root, {})).toContain('filter.x.clean=');
      expect(reads).toBe(2);
      writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = false\n');
      expect(await args(root, {})).toContain('filter.y.clean=');
      expect(reads).toBe(3);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
