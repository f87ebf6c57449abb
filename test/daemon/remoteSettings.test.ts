/**
 * The settings that name a program git runs when it talks to a remote (core.sshCommand, core.askPass, the credential
 * helpers, a remote's uploadpack and receivepack, the protocols allowed) run nothing an agent wrote: the daemon's
 * clone of a shared remote checks out main, agents' merged work, and a person who keeps the team's settings in a
 * committed `.gitconfig` includes it (`git config include.path ../.gitconfig`). The person's own settings (their
 * global config, the clone's .git/config) are what pushing to a real remote needs, and are kept.
 */
import { createServer } from 'node:http';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Project } from '../../src/core/types.js';
import { ProjectRepos } from '../../src/daemon/repos.js';
import { git as maestroGit } from '../../src/git/git.js';
import { tempDir } from '../helpers/db.js';
import { git, makeRepo } from '../helpers/repo.js';

const ran = (log: string) => (existsSync(log) ? [...new Set(readFileSync(log, 'utf8').trim().split('\n'))].sort() : []);

/** A program that notes `name` in `log`, then runs `then` (the real program, so that nothing looks amiss). */
const noting = (log: string, name: string, then = 'exit 1') => `#!/bin/sh\necho ${name} >> '${log}'\n${then}\n`;

/**
 * A shared remote whose main holds, as an agent's merged work would, a `.gitconfig` naming its own scripts for
 * every transport setting, and the daemon's clone of it that includes that file. Returns what the scripts ran into.
 */
async function cloneIncludingTheTree(more: string[] = []) {
  const log = join(tempDir('maestro-ran-'), 'ran');
  const work = makeRepo();
  const remote = join(tempDir('maestro-remote-'), 'remote.git');
  git(work, 'clone', '-q', '--bare', work, remote);
  const project: Project = { id: 'p_remote_settings', name: 'settings', repoPath: work, config: { remote }, createdAt: 0, updatedAt: 0, archivedAt: null };
  const repos = new ProjectRepos(tempDir('maestro-home-'));
  const clone = await repos.prepare(project);
  git(clone, 'config', 'include.path', '../.gitconfig');

  const agent = join(tempDir('maestro-agent-'), 'wt');
  git(work, 'clone', '-q', remote, agent);
  mkdirSync(join(agent, 'tools'));
  const scripts: Record<string, string> = {
    'up.sh': noting(log, 'agent uploadpack', 'exec git-upload-pack "$@"'),
    'receive.sh': noting(log, 'agent receivepack', 'exec git-receive-pack "$@"'),
    'ssh.sh': noting(log, 'agent sshCommand'),
    'cred.sh': noting(log, 'agent credential.helper'),
    'askpass.sh': noting(log, 'agent askPass'),
  };
  for (const [name, text] of Object.entries(scripts)) writeFileSync(join(agent, 'tools', name), text, { mode: 0o755 });
  writeFileSync(
    join(agent, '.gitconfig'),
    [
      '[remote "origin"]',
      '\tuploadpack = sh tools/up.sh',
      '\treceivepack = sh tools/receive.sh',
      '[core]',
      '\tsshCommand = sh tools/ssh.sh',
      '\taskPass = tools/askpass.sh',
      '[credential]',
      '\thelper = !sh tools/cred.sh',
      '[protocol]',
      '\tallow = always',
      ...more,
      '',
    ].join('\n'),
  );
  git(agent, 'add', '-A');
  git(agent, 'commit', '-q', '-m', 'settings');
  git(agent, 'push', '-q', 'origin', 'main');
  // The next sync checks the agent's merged main out in the clone: from then on the include reads its .gitconfig.
  await repos.prepare(project);
  expect(readFileSync(join(clone, '.gitconfig'), 'utf8')).toContain('tools/up.sh');
  return { log, project, repos, clone, remote };
}

/** An HTTP host that asks for a password on every request: git asks its credential helpers, then askpass. */
async function passwordHost() {
  const server = createServer((_req, res) => {
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}/repo.git`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("settings that name a program git runs for a remote, from a file of the clone's working tree", () => {
  it("run none of the agent's scripts at the daemon's fetch and push", async () => {
    const { log, project, repos, clone } = await cloneIncludingTheTree();
    await repos.refresh(project);
    git(clone, 'checkout', '-q', '-b', 'task/t1');
    git(clone, 'commit', '-q', '--allow-empty', '-m', 'work');
    await repos.pushBranch(project, clone, 'task/t1', async () => true);
    expect(ran(log)).toEqual([]);
    // The push went through git's own receive-pack.
    expect(git(clone, 'ls-remote', 'origin', 'refs/heads/task/t1')).toContain(git(clone, 'rev-parse', 'task/t1'));
  });

  it("run none of the agent's ssh, credential helper or askpass; the person's own (their global config) run", async () => {
    const { log, clone } = await cloneIncludingTheTree();
    const person = tempDir('maestro-person-');
    writeFileSync(join(person, 'ssh.sh'), noting(log, 'person sshCommand'));
    writeFileSync(join(person, 'cred.sh'), noting(log, 'person credential.helper', 'exit 0'));
    for (const f of ['ssh.sh', 'cred.sh']) chmodSync(join(person, f), 0o755);
    const global = join(person, 'gitconfig');
    writeFileSync(global, `[core]\n\tsshCommand = ${join(person, 'ssh.sh')}\n[credential]\n\thelper = !${join(person, 'cred.sh')}\n`);
    const env = { GIT_CONFIG_GLOBAL: global };

    await maestroGit(clone, ['ls-remote', 'ssh://git.invalid/repo.git'], { env }).catch(() => undefined);
    const host = await passwordHost();
    try {
      await maestroGit(clone, ['ls-remote', host.url], { env }).catch(() => undefined);
    } finally {
      await host.close();
    }
    expect(ran(log)).toEqual(['person credential.helper', 'person sshCommand']);
  });

  it('an ext:: remote stays refused though the included file allows every protocol', async () => {
    const { log, clone } = await cloneIncludingTheTree();
    const program = join(tempDir('maestro-ext-'), 'ext.sh');
    writeFileSync(program, noting(log, 'ext transport'), { mode: 0o755 });
    const err = await maestroGit(clone, ['ls-remote', `ext::${program}`]).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/transport 'ext' not allowed/);
    expect(ran(log)).toEqual([]);
  });

  it("refuses a push whose destination a file of the working tree sets: nothing goes to the agent's place or the remote", async () => {
    const elsewhere = join(tempDir('maestro-elsewhere-'), 'elsewhere.git');
    git(tempDir('maestro-init-'), 'init', '-q', '--bare', elsewhere);
    const { project, repos, clone, remote } = await cloneIncludingTheTree(['[remote "origin"]', `\tpushurl = ${elsewhere}`]);
    git(clone, 'checkout', '-q', '-b', 'task/t2');
    git(clone, 'commit', '-q', '--allow-empty', '-m', 'work');
    await expect(repos.pushBranch(project, clone, 'task/t2', async () => true)).rejects.toThrow(
      /remote\.origin\.pushurl set in .*\.gitconfig, a file of the working tree.*would choose where git push goes/,
    );
    expect(git(elsewhere, 'for-each-ref')).toBe('');
    expect(git(remote, 'for-each-ref', 'refs/heads/task')).toBe('');
  });
});

describe('settings a file of the working tree includes from outside it', () => {
  it("are the tree's too: an include to a file the agent wrote elsewhere (its worktree) runs none of its programs and sends no push there", async () => {
    // The agent's worktree, outside the clone's working tree, which the merged .gitconfig names by absolute path.
    const outside = tempDir('maestro-agent-worktree-');
    const elsewhere = join(tempDir('maestro-elsewhere-'), 'elsewhere.git');
    git(tempDir('maestro-init-'), 'init', '-q', '--bare', elsewhere);
    const { log, project, repos, clone, remote } = await cloneIncludingTheTree(['[include]', `\tpath = ${join(outside, 'more.cfg')}`]);
    writeFileSync(join(outside, 'up.sh'), noting(log, 'included uploadpack', 'exec git-upload-pack "$@"'), { mode: 0o755 });
    writeFileSync(join(outside, 'more.cfg'), `[remote "origin"]\n\tuploadpack = sh ${join(outside, 'up.sh')}\n\tpushurl = ${elsewhere}\n`);
    git(clone, 'checkout', '-q', '-b', 'task/t3');
    git(clone, 'commit', '-q', '--allow-empty', '-m', 'work');
    await expect(repos.pushBranch(project, clone, 'task/t3', async () => true)).rejects.toThrow(/remote\.origin\.pushurl set in .*more\.cfg, a file of the working tree/);
    expect(git(elsewhere, 'for-each-ref')).toBe('');
    expect(git(remote, 'for-each-ref', 'refs/heads/task')).toBe('');
    // Without the pushurl, the fetch runs git's own upload-pack, not the one the included file names.
    writeFileSync(join(outside, 'more.cfg'), `[remote "origin"]\n\tuploadpack = sh ${join(outside, 'up.sh')}\n`);
    await repos.refresh(project);
    expect(ran(log)).toEqual([]);
  });
});

describe('a proxy or TLS setting from a file of the working tree', () => {
  it("is refused like a destination: the agent's proxy never sees the person's credentials", async () => {
    // The agent's proxy: it asks for a password as the host would, and keeps what it is sent.
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization ?? '-'}`);
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
      res.end();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    const { clone } = await cloneIncludingTheTree(['[http]', `\tproxy = http://127.0.0.1:${port}`, '\tsslVerify = false']);
    const person = tempDir('maestro-person-');
    writeFileSync(join(person, 'cred.sh'), '#!/bin/sh\necho username=person\necho password=s3cret\n', { mode: 0o755 });
    const global = join(person, 'gitconfig');
    writeFileSync(global, `[credential]\n\thelper = !${join(person, 'cred.sh')}\n`);
    const host = await passwordHost();
    try {
      const err = await maestroGit(clone, ['ls-remote', host.url], { env: { GIT_CONFIG_GLOBAL: global } }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/http\.proxy set in .*\.gitconfig, a file of the working tree.*would choose where git ls-remote goes/);
    } finally {
      await host.close();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
    expect(seen).toEqual([]);
  });
});

describe('a refspec from a file of the working tree', () => {
  it("moves no task branch of the daemon's clone at its fetch: the fetch is refused, naming the setting", async () => {
    const { project, repos, clone } = await cloneIncludingTheTree(['[remote "origin"]', '\tfetch = +refs/heads/main:refs/heads/task/t4']);
    git(clone, 'branch', 'task/t4', 'main');
    git(clone, 'checkout', '-q', 'task/t4');
    git(clone, 'commit', '-q', '--allow-empty', '-m', 'the work of t4');
    git(clone, 'checkout', '-q', 'main');
    const work = git(clone, 'rev-parse', 'task/t4');
    // The daemon's fetch of main and the task branches (fetchForSync).
    const err = await repos.refresh(project).then(
      () => null,
      (e: Error) => e,
    );
    expect(git(clone, 'rev-parse', 'task/t4')).toBe(work);
    expect(err?.message).toMatch(/remote\.origin\.fetch set in .*\.gitconfig, a file of the working tree.*would choose where git fetch goes/);
  });
});
