/** The agent sandbox, started for real: what a process inside can read, write and see. */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapUnusable } from '../../test/helpers/bwrap.js';
import { sandboxProblem, sandboxStartError, sandboxed, socketScopeProblem, withStateDirs, withTool, type RunSandbox } from './sandbox.js';

const unusable = bwrapUnusable();
const scopeProblem = unusable ? 'bwrap is unusable here' : socketScopeProblem();
if (scopeProblem && !unusable) console.warn(`\n*** SKIPPED: abstract sockets are not scoped in the sandbox on this machine: ${scopeProblem} ***\n`);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A home with a token, a repository, a worktree in the home (as the daemon lays them out), a secret file. */
function layout() {
  const root = mkdtempSync(join(tmpdir(), 'maestro-sandbox-'));
  dirs.push(root);
  const home = join(root, 'home');
  const repo = join(root, 'repo');
  const worktree = join(home, 'worktrees', 'p1', 'T1-v1');
  const other = join(home, 'worktrees', 'p1', 'T2-v1');
  for (const d of [repo, worktree, other]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, 'token'), 'daemon-token-123\n');
  writeFileSync(join(repo, 'README.md'), '# repo\n');
  writeFileSync(join(worktree, '.git'), `gitdir: ${repo}/.git/worktrees/T1-v1\n`);
  writeFileSync(join(other, 'secret.txt'), 'another task\n');
  const netrc = join(root, 'netrc');
  writeFileSync(netrc, 'machine example.com password hunter2\n');
  const sandbox: RunSandbox = { spec: { kind: 'bwrap', hide: [home, netrc], readOnly: [repo], writable: [] }, worktree };
  return { root, home, repo, worktree, netrc, sandbox };
}

/** Runs `script` with sh in `cwd`, in the sandbox; its stdout, stderr and exit status. */
function sh(sandbox: RunSandbox | null, cwd: string, script: string, env: NodeJS.ProcessEnv = process.env) {
  const start = sandboxed(sandbox, cwd, '/bin/sh', ['-c', script]);
  const r = spawnSync(start.file, start.args, { cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { out: r.stdout.trim(), err: r.stderr.trim(), status: r.status };
}

describe.skipIf(unusable)('the agent sandbox (bwrap)', () => {
  it('hides the home (its token, other worktrees) and hidden files, while the process outside reads them', () => {
    const l = layout();
    const probe = `cat ${l.home}/token; ls ${l.home}/worktrees/p1; cat ${l.netrc}; echo end`;
    // The same probe without the sandbox reads everything: the assertions below are the sandbox's doing.
    expect(sh(null, l.worktree, probe).out).toContain('daemon-token-123');
    const inside = sh(l.sandbox, l.worktree, probe);
    expect(inside.out).not.toContain('daemon-token-123');
    expect(inside.out).not.toContain('T2-v1');
    expect(inside.out).not.toContain('hunter2');
    expect(inside.err).toMatch(/token: No such file/);
    expect(inside.out).toMatch(/end$/);
  });

  it('writes only the worktree: the repository, the rest of the home and the worktree .git pointer are read-only', () => {
    const l = layout();
    const r = sh(l.sandbox, l.worktree, `echo work > made.txt && echo ok-worktree;
      echo x > ${l.repo}/evil.txt || echo denied-repo;
      echo 'gitdir: /elsewhere' > .git || echo denied-git;
      echo x > /etc/maestro-evil.txt || echo denied-system;
      echo x > ${l.root}/evil.txt && echo private-tmp;
      cat ${l.repo}/README.md`);
    expect(r.out.split('\n')).toEqual(['ok-worktree', 'denied-repo', 'denied-git', 'denied-system', 'private-tmp', '# repo']);
    // /tmp inside is its own: what it wrote there never reached the real folder.
    expect(existsSync(join(l.root, 'evil.txt'))).toBe(false);
    expect(existsSync(join(l.repo, 'evil.txt'))).toBe(false);
    expect(readFileSync(join(l.worktree, 'made.txt'), 'utf8')).toBe('work\n');
    expect(readFileSync(join(l.worktree, '.git'), 'utf8')).toContain(`${l.repo}/.git/worktrees/T1-v1`);
  });

  it('nests: a home inside the repository stays hidden, a clone inside the home is readable', () => {
    const root = mkdtempSync(join(tmpdir(), 'maestro-sandbox-'));
    dirs.push(root);
    const repo = join(root, 'repo');
    const home = join(repo, '.maestro-home');
    const clone = join(home, 'repos', 'p2');
    mkdirSync(clone, { recursive: true });
    writeFileSync(join(home, 'token'), 'daemon-token-123\n');
    writeFileSync(join(clone, 'README.md'), 'the clone\n');
    const nested: RunSandbox = { spec: { kind: 'bwrap', hide: [home], readOnly: [repo, clone], writable: [] }, worktree: null };
    const r = sh(nested, repo, `cat ${home}/token 2>/dev/null || echo hidden; cat ${clone}/README.md`);
    expect(r.out.split('\n')).toEqual(['hidden', 'the clone']);
  });

  it("makes an agent tool's missing state folder and leaves it writable, but never one in a hidden folder", () => {
    const l = layout();
    const state = join(l.root, 'user', '.claude');
    const intoHome = join(l.root, 'link-to-home');
    symlinkSync(l.home, intoHome);
    const box = withStateDirs(l.sandbox, [state, join(l.home, 'runs'), join(intoHome, 'worktrees'), 'relative/dir'])!;
    expect(existsSync(state)).toBe(true);
    expect(existsSync(join(l.home, 'runs'))).toBe(false);
    expect(box.spec.writable).toEqual([state]);
    const r = sh(box, l.worktree, `echo kept > ${state}/session.jsonl && echo wrote; ls ${intoHome}/worktrees 2>/dev/null | wc -l`);
    expect(r.out.split('\n')).toEqual(['wrote', '0']);
    expect(readFileSync(join(state, 'session.jsonl'), 'utf8')).toBe('kept\n');
  });

  it("keeps the scripts the tool's locked settings name read-only in its writable folder (a status line, a key helper)", () => {
    // Claude Code's /statusline writes ~/.claude/statusline-command.sh and names it in settings.json: a run that
    // rewrote it would have the user's next session, outside any sandbox, run what it wrote at every prompt.
    const l = layout();
    const state = join(l.root, 'user', '.claude');
    mkdirSync(state, { recursive: true });
    for (const name of ['statusline-command.sh', 'key-helper.py', 'history.jsonl']) writeFileSync(join(state, name), 'mine\n');
    const settings = join(state, 'settings.json');
    writeFileSync(settings, JSON.stringify({ statusLine: { type: 'command', command: `bash ${state}/statusline-command.sh` }, apiKeyHelper: `${state}/key-helper.py --profile x` }));
    const box = withStateDirs(l.sandbox, [state], [settings])!;
    const write = (name: string) => `(echo planted > ${join(state, name)}) 2>/dev/null && echo wrote ${name}`;
    const r = sh(box, l.worktree, `${write('statusline-command.sh')}; ${write('key-helper.py')}; ${write('history.jsonl')}; echo end`);
    expect(r.out.split('\n')).toEqual(['wrote history.jsonl', 'end']);
    expect(readFileSync(join(state, 'statusline-command.sh'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(state, 'key-helper.py'), 'utf8')).toBe('mine\n');
  });

  it('makes a script the locked settings name but the user never wrote, read-only, so a run cannot create it', () => {
    // settings.json names ~/.claude/hooks/on-stop.sh, which is not there (yet): a run that created it would have the
    // user's next session, outside any sandbox, run what it wrote. A named folder without an extension is left alone.
    const l = layout();
    const state = join(l.root, 'user', '.claude');
    mkdirSync(state, { recursive: true });
    const settings = join(state, 'settings.json');
    writeFileSync(settings, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: `sh ${state}/hooks/on-stop.sh; ls ${state}/agents` }] }] }, statusLine: { type: 'command', command: `~/.claude/status.sh` } }));
    const box = withStateDirs(l.sandbox, [state], [settings], [], join(l.root, 'user'))!;
    const plant = (path: string) => `(mkdir -p ${dirname(path)} && echo planted > ${path}) 2>/dev/null && echo wrote ${path.slice(state.length + 1)}`;
    const r = sh(box, l.worktree, `${plant(join(state, 'hooks', 'on-stop.sh'))}; ${plant(join(state, 'status.sh'))}; mkdir ${state}/agents && echo made agents; echo end`);
    expect(r.out.split('\n')).toEqual(['made agents', 'end']);
    expect(readFileSync(join(state, 'hooks', 'on-stop.sh'), 'utf8')).toBe('');
    expect(readFileSync(join(state, 'status.sh'), 'utf8')).toBe('');
  });

  it.skipIf(scopeProblem !== null)("keeps abstract sockets made outside (an X11 display's) out of reach; the run's own still work", async () => {
    // The network namespace is shared, and with it the abstract sockets: X11 listens on @/tmp/.X11-unix/X0, and a
    // client there types into every window of the person's session.
    const l = layout();
    const name = `maestro-test-${process.pid}-${Date.now()}`;
    const server = createServer((c) => c.end());
    await new Promise<void>((ok) => server.listen(`\0${name}`, ok));
    try {
      const connect = (sock: string) => `const c = require('net').connect('\\0${sock}'); c.on('connect', () => { console.log('connected'); c.destroy(); }); c.on('error', (e) => console.log(e.code));`;
      const own = `const n = require('net'); const s = n.createServer((c) => c.end()).listen('\\0own-${name}', () => { const c = n.connect('\\0own-${name}'); c.on('connect', () => { console.log('own connected'); c.destroy(); s.close(); }); c.on('error', (e) => { console.log('own', e.code); s.close(); }); });`;
      const script = `${process.execPath} -e "${connect(name)}"; ${process.execPath} -e "${own}"`;
      expect(sh(null, l.worktree, script).out.split('\n')).toEqual(['connected', 'own connected']);
      // A locale no machine has (a person's LANG from another system, say): perl, which sets the scope up, warns on
      // every run about one it cannot set unless told not to (PERL_BADLANG=0), and the warning lands in each check's log.
      const inside = sh(l.sandbox, l.worktree, script, { ...process.env, LC_ALL: 'xx_YY.UTF-8' });
      expect(inside.out.split('\n')).toEqual(['EPERM', 'own connected']);
      expect(inside.err).toBe('');
    } finally {
      server.close();
    }
  });

  it('runs the tool the daemon found though it lies in /tmp, with the files beside it; never shows a hidden folder or /tmp whole', () => {
    const l = layout();
    const tools = join(l.root, 'tools');
    mkdirSync(tools);
    writeFileSync(join(tools, 'greeting.txt'), 'hello from beside the tool\n');
    const tool = join(tools, 'agent-cli');
    writeFileSync(tool, `#!/bin/sh\ncat ${join(tools, 'greeting.txt')}\n`);
    chmodSync(tool, 0o755);
    const run = (sandbox: RunSandbox) => {
      const start = sandboxed(sandbox, l.worktree, tool, []);
      return spawnSync(start.file, start.args, { cwd: l.worktree, encoding: 'utf8', timeout: 60_000 });
    };
    const missing = run(l.sandbox);
    expect(missing.stderr).toMatch(/execvp .*agent-cli: No such file or directory/);
    // Read as the spawn error it stands for: the provider says the tool is not installed.
    expect(sandboxStartError(missing.status, missing.stderr.trim().split('\n'))?.code).toBe('ENOENT');
    expect(run(withTool(l.sandbox, tool)!).stdout).toBe('hello from beside the tool\n');
    // A tool in the hidden home, or one whose folder is the shared /tmp, shows nothing more.
    writeFileSync(join(l.home, 'tool'), '#!/bin/sh\n');
    expect(withTool(l.sandbox, join(l.home, 'tool'))!.spec.readOnly).toEqual(l.sandbox.spec.readOnly);
    expect(withTool(l.sandbox, join(tmpdir(), 'tool'))!.spec.readOnly).toEqual(l.sandbox.spec.readOnly);
  });

  it("keeps npm's, yarn's and Go's caches in its own /tmp, where npm can write; one the config makes writable stays the user's", () => {
    const l = layout();
    const r = sh(l.sandbox, l.worktree, 'npm config get cache; echo "$YARN_CACHE_FOLDER $GOCACHE"; mkdir -p "$GOCACHE" && echo go-ok');
    expect(r.out.split('\n')).toEqual(['/tmp/.npm', '/tmp/yarn /tmp/go-build', 'go-ok']);
    const npmDir = join(l.root, 'user', '.npm');
    mkdirSync(npmDir, { recursive: true });
    const kept = { ...l.sandbox, spec: { ...l.sandbox.spec, writable: [npmDir] } };
    // npm's cache is then what it is outside (under `npm test`, npm itself sets npm_config_cache).
    expect(sh(kept, l.worktree, 'echo "${npm_config_cache:-unset} $GOCACHE"').out).toBe(`${process.env.npm_config_cache ?? 'unset'} /tmp/go-build`);
  });

  it('sees no process outside it, and has a /tmp of its own', () => {
    const l = layout();
    const outsideTmp = join(tmpdir(), `maestro-sandbox-visible-${process.pid}`);
    writeFileSync(outsideTmp, 'x');
    dirs.push(outsideTmp);
    const r = sh(l.sandbox, l.worktree, `ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; test -e ${outsideTmp} && echo tmp-shared || echo tmp-private; test -e /proc/${process.pid}/environ && echo parent-visible || echo parent-hidden`);
    const [pids, tmp, parent] = r.out.split('\n');
    expect(pids!.trim().split(' ').length).toBeLessThan(10); // sh and its own children, never the daemon's tree
    expect(tmp).toBe('tmp-private');
    expect(parent).toBe('parent-hidden');
  });
});

describe('the sandbox check at daemon start', () => {
  it('says to install bubblewrap when bwrap is not on PATH', () => {
    const empty = mkdtempSync(join(tmpdir(), 'maestro-nopath-'));
    dirs.push(empty);
    expect(sandboxProblem({ PATH: empty })).toMatch(/^bwrap is not installed .*apt-get install bubblewrap/);
  });

  it.skipIf(unusable)('finds nothing wrong where bwrap works', () => {
    expect(sandboxProblem(process.env)).toBeNull();
  });

  it('without a sandbox, a command starts as it is', () => {
    expect(sandboxed(undefined, '/tmp', 'codex', ['exec', '-'])).toEqual({ file: 'codex', args: ['exec', '-'] });
  });
});
