/**
 * A repository whose settings name programs in its own tree: husky's `core.hooksPath=.husky`, a clean filter
 * `sh tools/clean.sh`, a textconv, a merge driver. An agent edits that tree, and git ran the edits outside the
 * sandbox, as the person, at the worker's commit and the daemon's merge: a trial's `.husky/post-commit` read the
 * daemon's token and approved its own task. Nothing the settings name runs now (src/git/inertConfig.ts).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../../src/git/git.js';
import { mergeIntoMain } from '../../src/git/merge.js';
import { parseJob } from '../../src/executor/protocol/job.js';
import { runPipeline } from '../../src/executor/run.js';
import { resultData, sandbox, type Sandbox } from './helpers.js';

/** A command agent whose execute call runs `script` in the worktree (sh). */
function shellAgent(sb: Sandbox, script: string): string[] {
  const path = join(sb.root, 'agent.sh');
  writeFileSync(path, `cat >/dev/null\nif [ "$MAESTRO_ROLE" = execute ]; then ${script}; fi\necho done\n`);
  return ['/bin/sh', path];
}

const jobFor = (sb: Sandbox, command: string[]) =>
  parseJob(sb.job({ kind: 'execute', provider: { kind: 'command', command }, task: { title: 'Tidy the notes', complexity: 'medium', ownedFiles: [] } } as never, '', 'e1'));

/**
 * The repository's settings name its own scripts, which main has harmless (each passes the content through):
 * hooks under .husky, a filter, a diff driver and a merge driver for *.txt. Every script and hook an agent
 * could plant appends its name to `ran` (outside the worktree) when it runs.
 */
function armedRepo(sb: Sandbox): { ran: string; plant: string } {
  const ran = join(sb.root, 'ran-outside');
  sb.commitFile('.gitattributes', '*.txt filter=strip diff=conv merge=mm\n');
  for (const tool of ['clean', 'smudge', 'conv']) sb.commitFile(`tools/${tool}.sh`, 'cat "$@"\n');
  sb.commitFile('tools/merge.sh', 'exit 0\n');
  sb.commitFile('notes.txt', 'one\ntwo\nthree\nfour\nfive\n');
  sb.git('config', 'core.hooksPath', '.husky');
  sb.git('config', 'filter.strip.clean', 'sh tools/clean.sh');
  sb.git('config', 'filter.strip.smudge', 'sh tools/smudge.sh');
  sb.git('config', 'diff.conv.textconv', 'sh tools/conv.sh');
  sb.git('config', 'merge.mm.driver', 'sh tools/merge.sh %O %A %B');
  const hooks = ['pre-commit', 'prepare-commit-msg', 'post-commit', 'post-checkout', 'post-merge', 'reference-transaction', 'post-index-change', 'pre-merge-commit'];
  const plant = [
    'mkdir -p .husky',
    ...hooks.map((h) => `printf '#!/bin/sh\\necho ${h} >> ${ran}\\n' > .husky/${h} && chmod +x .husky/${h}`),
    ...['clean', 'smudge', 'conv', 'merge'].map((t) => `printf 'echo ${t} >> ${ran}\\ncat "$@"\\n' > tools/${t}.sh`),
    'sed -i s/one/ONE/ notes.txt',
  ].join(' && ');
  return { ran, plant };
}

const said = (ran: string) => (existsSync(ran) ? readFileSync(ran, 'utf8').trim().split('\n').sort().join(', ') : 'nothing ran');

describe("programs a repository's settings name in its own tree", () => {
  it("run neither at the worker's commit nor at the merge into the person's checkout; the change is as the agent wrote it", async () => {
    using sb = sandbox();
    const { ran, plant } = armedRepo(sb);
    const data = resultData<{ branch: string; diff: { files: string[] } }>(await runPipeline(jobFor(sb, shellAgent(sb, plant)), { runDir: sb.runDir('e1') }));
    expect(data.diff.files).toEqual(expect.arrayContaining(['.husky/post-commit', 'tools/clean.sh', 'notes.txt']));
    expect(said(ran)).toBe('nothing ran');
    // The filter passed the content as it was: the commit holds the agent's edit.
    expect(sb.git('show', `${data.branch}:notes.txt`)).toBe('ONE\ntwo\nthree\nfour\nfive');

    // main moves on meanwhile, so the merge is a real three-way one through the merge driver's attribute.
    sb.git('checkout', '-q', 'main');
    sb.commitFile('notes.txt', 'one\ntwo\nthree\nfour\nFIVE\n');
    await mergeIntoMain({ repoPath: sb.repo, branch: data.branch, baseBranch: 'main', strategy: 'merge' });
    expect(said(ran)).toBe('nothing ran');
    // git's own three-way merge took both edits, and the checkout was written without the smudge filter.
    expect(readFileSync(join(sb.repo, 'notes.txt'), 'utf8')).toBe('ONE\ntwo\nthree\nfour\nFIVE\n');
    expect((await git(sb.repo, ['status', '--porcelain'])).stdout).toBe('');
  });

  it("a file the repository's settings include, changed by a merge, names no program git then runs: its drivers are read again", async () => {
    using sb = sandbox();
    const ran = join(sb.root, 'ran-outside');
    // A team's shared settings, committed and included (`git config include.path ../.gitconfig`): aliases, say.
    sb.commitFile('.gitconfig', '[alias]\n\tst = status\n');
    sb.commitFile('notes.txt', 'one\n');
    sb.git('config', 'include.path', '../.gitconfig');
    // Maestro's git has read this repository's drivers (none) before the merge.
    await git(sb.repo, ['status', '--porcelain']);
    // The agent's change: a filter in the included file, the attribute, and its script, which says it ran.
    const plant = [
      `printf '[filter "x"]\\n\\tclean = sh tools/x.sh\\n\\tsmudge = sh tools/x.sh\\n' >> .gitconfig`,
      `echo '*.txt filter=x' > .gitattributes`,
      `mkdir -p tools && printf 'echo x >> ${ran}\\ncat\\n' > tools/x.sh`,
    ].join(' && ');
    const data = resultData<{ branch: string }>(await runPipeline(jobFor(sb, shellAgent(sb, plant)), { runDir: sb.runDir('e1') }));
    await mergeIntoMain({ repoPath: sb.repo, branch: data.branch, baseBranch: 'main', strategy: 'merge' });
    expect(readFileSync(join(sb.repo, '.gitconfig'), 'utf8')).toContain('[filter "x"]');
    // The next commands in the checkout (the next merge's status, an add) read the new settings.
    writeFileSync(join(sb.repo, 'notes.txt'), 'two\n');
    await git(sb.repo, ['status', '--porcelain']);
    await git(sb.repo, ['add', 'notes.txt']);
    expect(said(ran)).toBe('nothing ran');
  });

  it("a signing program the settings name in the tree does not run at the worker's commit: git's own gpg is asked instead", async () => {
    using sb = sandbox();
    const ran = join(sb.root, 'ran-outside');
    sb.git('config', 'commit.gpgSign', 'true');
    sb.git('config', 'gpg.program', 'tools/sign.sh');
    sb.git('config', 'gpg.ssh.defaultKeyCommand', 'tools/key.sh');
    const plant = `mkdir -p tools && printf 'echo sign >> ${ran}\\nexit 1\\n' > tools/sign.sh && printf 'echo key >> ${ran}\\n' > tools/key.sh && chmod +x tools/sign.sh tools/key.sh && echo hi > notes.txt`;
    // No key to sign with here: the commit fails, as a person's own would, and nothing of the agent's ran.
    const record = await runPipeline(jobFor(sb, shellAgent(sb, plant)), { runDir: sb.runDir('e1') });
    expect(said(ran)).toBe('nothing ran');
    expect(record).toMatchObject({ type: 'error', message: expect.stringContaining('gpg failed to sign') });
  });

  it('a key command a committed file of the tree sets does not run, whatever its program: sh tools/key.sh from an included .gitconfig', async () => {
    using sb = sandbox();
    const ran = join(sb.root, 'ran-outside');
    sb.commitFile('.gitconfig', '[gpg "ssh"]\n\tdefaultKeyCommand = sh tools/key.sh\n');
    sb.git('config', 'include.path', '../.gitconfig');
    sb.git('config', 'commit.gpgSign', 'true');
    sb.git('config', 'gpg.format', 'ssh');
    const plant = `mkdir -p tools && printf 'echo key >> ${ran}\\n' > tools/key.sh && echo hi > notes.txt`;
    // With no key named, git asks the key command for one; dropped, the commit fails for want of a key.
    const record = await runPipeline(jobFor(sb, shellAgent(sb, plant)), { runDir: sb.runDir('e1') });
    expect(said(ran)).toBe('nothing ran');
    expect(record).toMatchObject({ type: 'error' });
  });

  it('a filter the repository marks required (an encryption filter) fails the run instead of committing the content in the clear', async () => {
    using sb = sandbox();
    const ran = join(sb.root, 'ran-outside');
    sb.commitFile('.gitattributes', 'secrets/* filter=seal\n');
    sb.commitFile('tools/seal.sh', 'cat\n');
    sb.git('config', 'filter.seal.clean', 'sh tools/seal.sh');
    sb.git('config', 'filter.seal.required', 'true');
    const plant = `printf 'echo seal >> ${ran}\\ncat\\n' > tools/seal.sh && mkdir -p secrets && echo hunter2 > secrets/key`;
    const record = await runPipeline(jobFor(sb, shellAgent(sb, plant)), { runDir: sb.runDir('e1') });
    expect(record).toMatchObject({ type: 'error' });
    expect(JSON.stringify(record)).toContain("clean filter 'seal' failed");
    expect(said(ran)).toBe('nothing ran');
    expect(sb.git('log', '--all', '--format=%H', '--', 'secrets/key')).toBe('');
  });

  it("keeps git-lfs's and git-crypt's drivers, programs of the machine: a stand-in git-lfs on PATH runs", async () => {
    using sb = sandbox();
    const bin = join(sb.root, 'bin');
    const ran = join(sb.root, 'lfs-ran');
    mkdirSync(bin);
    writeFileSync(join(bin, 'git-lfs'), `#!/bin/sh\necho "$1" >> ${ran}\ncat\n`);
    chmodSync(join(bin, 'git-lfs'), 0o755);
    sb.commitFile('.gitattributes', '*.bin filter=lfs\n');
    sb.git('config', 'filter.lfs.clean', 'git-lfs clean -- %f');
    sb.git('config', 'filter.lfs.smudge', 'git-lfs smudge -- %f');
    writeFileSync(join(sb.repo, 'big.bin'), 'data\n');
    await git(sb.repo, ['add', 'big.bin'], { env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(said(ran)).toBe('clean');
  });
});
