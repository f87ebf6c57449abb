/** diffText's cut against names a hostile agent commits past it: each file the reviewers did not see is named as it is. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { diffStats, diffText } from './diff.js';

afterEach(() => removeTempDirs());

describe('diffText, hostile names past the cut', () => {
  it('names every file past the cut as it is: one holding " b/", a quoted one, a non-ASCII one', async () => {
    const repo = makeRepo();
    git(repo, 'checkout', '-q', '-b', 'topic');
    // Padding first (git orders files by name), then the changes pushed past the cut.
    writeFileSync(join(repo, 'a-padding.txt'), 'pad\n'.repeat(500));
    mkdirSync(join(repo, 'x b'));
    writeFileSync(join(repo, 'x b/y.ts'), 'evil()\n');
    for (const name of ['tab\there.ts', 'ü-names.ts']) writeFileSync(join(repo, name), 'evil()\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'hostile');
    const cut = await diffText(repo, 'main', 'topic', 500);
    const said = /Not shown above, in part or at all, the changes to: (.*)\. Read those files/s.exec(cut)?.[1];
    // The regex said "a-padding.txt, y.ts" (" b/" read as the second half) and passed over both quoted names.
    expect(said).toBe('a-padding.txt, tab\there.ts, x b/y.ts, ü-names.ts');
  });

  it("counts the lines and the gitlinks of a change whatever the repository's git config says", async () => {
    const repo = makeRepo();
    git(repo, 'checkout', '-q', '-b', 'topic');
    writeFileSync(join(repo, 'x.ts'), 'evil()\n');
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`);
    git(repo, 'add', 'x.ts');
    git(repo, 'commit', '-q', '-m', 'hostile');
    execFileSync('mkfifo', [join(repo, '.git/order')]); // git opened it to read, and waited for a writer for ever
    for (const [key, value] of [['diff.ignoreSubmodules', 'all'], ['core.bigFileThreshold', '1'], ['diff.orderFile', join(repo, '.git/order')]]) git(repo, 'config', key!, value!);
    // The gitlink was in no list (strayGitlinks passed it), and x.ts was binary: no lines for maxDiffLines.
    expect(await diffStats(repo, 'main', 'topic', [])).toMatchObject({ files: ['vendor/lib', 'x.ts'], linesAdded: 2, strayGitlinks: ['vendor/lib'] });
    const shown = await diffText(repo, 'main', 'topic');
    expect(shown).toContain('+evil()');
    expect(shown).toContain(`+Subproject commit ${'1'.repeat(40)}`);
  });
});
