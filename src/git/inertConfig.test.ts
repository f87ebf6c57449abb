import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INERT_ALWAYS, configEntries, includedFiles, inWorkingTree, inertArgsCache, inertDriverArgs, inertSigningArgs } from './inertConfig.js';

const config = (pairs: Array<[string, string]>) => pairs.map(([key, value]) => ({ key, value }));
/** `git config -z --show-origin --get-regexp` output of `pairs`, all from `origin`. */
const shown = (pairs: Array<[string, string]>, origin = '.git/config') => pairs.map(([k, v]) => `file:${origin}\0${k}\n${v}\0`).join('');

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
      const answers: Array<string | null> = [null, shown([['filter.x.clean', 'sh x.sh']]), shown([['filter.y.clean', 'sh y.sh']])];
      let reads = 0;
      const args = inertArgsCache(async () => answers[reads++] as string | null);
      expect((await args(root, {})).config).toEqual(INERT_ALWAYS);
      expect((await args(root, {})).config).toContain('filter.x.clean=');
      expect((await args(root, {})).config).toContain('filter.x.clean=');
      expect(reads).toBe(2);
      writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = false\n');
      expect((await args(root, {})).config).toContain('filter.y.clean=');
      expect(reads).toBe(3);
      // Rewritten with the same settings (git does so at every `git branch -D`: a new file renamed over it): not read again.
      writeFileSync(join(root, '.git', 'config.new'), '[core]\n\tbare = false\n');
      renameSync(join(root, '.git', 'config.new'), join(root, '.git', 'config'));
      expect((await args(root, {})).config).toContain('filter.y.clean=');
      expect(reads).toBe(3);
      // Another setting of the same length, in place: read again.
      writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = fals0\n');
      await args(root, {});
      expect(reads).toBe(4);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the files a repository includes', () => {
  it('are read from the origins git shows, ~/ in the home and a relative path beside the file that names it; no driver is made of them', () => {
    const out = shown([['include.path', '../.gitconfig'], ['includeif.gitdir:/work/.path', '~/work.cfg'], ['include.path', '/etc/team.cfg']]) + shown([['filter.x.clean', 'sh x.sh'], ['include.path', 'sub/more.cfg']], '.git/../.gitconfig') + 'command line:\0include.path\nignored.cfg\0';
    const entries = configEntries(out);
    expect(includedFiles(entries, '/repo', '/home/u')).toEqual(['/repo/.gitconfig', '/home/u/work.cfg', '/etc/team.cfg', '/repo/sub/more.cfg']);
    expect(inertDriverArgs(entries)).toEqual(['-c', 'filter.x.clean=', '-c', 'filter.x.smudge=', '-c', 'filter.x.process=']);
  });

  it('are read again when one of them changes, or one not there yet is made', async () => {
    const root = mkdtempSync(join(tmpdir(), 'maestro-inert-'));
    try {
      mkdirSync(join(root, '.git'));
      writeFileSync(join(root, '.git', 'config'), '[include]\n\tpath = ../.gitconfig\n');
      let reads = 0;
      const args = inertArgsCache(async () => (reads++, shown([['include.path', '../.gitconfig']])));
      await args(root, {});
      await args(root, {});
      expect(reads).toBe(1);
      writeFileSync(join(root, '.gitconfig'), '[filter "x"]\n\tclean = sh x.sh\n');
      await args(root, {});
      expect(reads).toBe(2);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('inertSigningArgs', () => {
  it('puts the default program in place of a signing program named by a relative path, and drops such a key command; keeps one by name or absolute path', () => {
    const entries = config([['gpg.program', 'tools/sign.sh'], ['gpg.x509.program', './x'], ['gpg.ssh.program', '/usr/bin/ssh-keygen'], ['gpg.openpgp.program', 'gpg2'], ['gpg.ssh.defaultkeycommand', 'tools/key.sh --first'], ['merge.mm.driver', 'sh tools/m.sh']]);
    expect(inertSigningArgs(entries)).toEqual(['-c', 'gpg.program=gpg', '-c', 'gpg.x509.program=gpgsm', '-c', 'gpg.ssh.defaultKeyCommand=']);
  });

  it('drops a key command set in a file of the working tree whatever it runs; keeps one from the git folder or the home', () => {
    const fromTree = inWorkingTree('.git', '/repo');
    const key = (origin: string) => ({ key: 'gpg.ssh.defaultkeycommand', value: 'ssh-add -L', origin });
    expect(inertSigningArgs([key('/repo/.gitconfig')], fromTree)).toEqual(['-c', 'gpg.ssh.defaultKeyCommand=']);
    expect(inertSigningArgs([key('.git/config'), key('/home/ann/.gitconfig'), key('/repository/x')], fromTree)).toEqual([]);
    // A bare repository (the daemon's clone of a shared remote) has no working tree.
    expect(inertSigningArgs([key('/srv/clone.git/../x')], inWorkingTree('/srv/clone.git', '/srv'))).toEqual([]);
  });
});
