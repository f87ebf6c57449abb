/**
 * The agent sandbox (on by default where bwrap works; the setting: src/config/sandbox.ts, settled at daemon
 * start by src/app/agentSandbox.ts): every process an agent run starts on the project's behalf (the agent
 * itself, an agent CLI, Claude Code and the tools it runs, the project's checks, which run the worktree's
 * own scripts) starts inside bubblewrap, so that an agent that goes looking cannot reach what the daemon
 * keeps:
 *   - the Maestro home is an empty folder (the token, the database, config.json, every other run and
 *     worktree); so is every other folder the config hides (`~/.ssh`, say);
 *   - a new PID namespace with its own /proc: no daemon or worker to read `/proc/<pid>/environ` of
 *     (the database URL, provider keys) or to signal;
 *   - the filesystem is read-only but for the task's worktree and the folders the config makes
 *     writable (an agent CLI's own state, `~/.claude`); /tmp is private;
 *   - the run directory (outbox, stages, transcript: what the daemon trusts) is a scratch copy of
 *     its run.json and knowledge ledger (src/executor/agentRunFolder.ts);
 *   - the worktree's `.git` file is read-only, so the agent cannot point the worker's own git
 *     (which runs outside, in that worktree) at a repository of its making, with its hooks;
 *   - a new session: no TIOCSTI into the terminal the daemon was started from.
 * The network is the host's ("shared", the default: the agent talks to its model, and the daemon's API still wants
 * the token), or a namespace of its own that reaches out only through a proxy that refuses the host's loopback, private
 * networks and the cloud metadata endpoint ("proxied"), or nothing ("none"): sandboxNet/relay.ts.
 *
 * Without a sandbox an agent runs as the user, as it always has (README: "What it does not protect against").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, extname, isAbsolute, join, resolve, sep } from 'node:path';
import { maestroCodeRoots } from './processes.js';
import { EXEC_SCRIPT, networkSetup, RELAY_SCRIPT, type SandboxNetwork } from './sandboxNet/relay.js';

export interface SandboxSpec {
  kind: 'bwrap';
  /** Folders (or files) the agent must not see: replaced by an empty folder (a file by /dev/null). */
  hide: string[];
  /** Readable again though under a hidden folder (the project's clone in the home). */
  readOnly: string[];
  /** Writable besides the worktree (an agent CLI's state folder); the rest of the filesystem is read-only. */
  writable: string[];
  /**
   * Whether this machine scopes a sandbox's abstract sockets, as the daemon settled it at start
   * (app/agentSandbox.ts): a worker told so starts no probe of its own. Absent: the process asks once (socketScopeOf).
   */
  sockets?: SocketScope;
  /** Its network (sandboxNet/relay.ts); absent: the host's, shared. */
  network?: SandboxNetwork;
}

/** Scoped (socketScopeProblem found none), or not, and why. */
export type SocketScope = { scoped: true } | { scoped: false; reason: string };

/** A run's sandbox: its spec and the task's worktree, the one folder of the project it may write (none for a plan). */
export interface RunSandbox {
  spec: SandboxSpec;
  worktree: string | null;
  /** A scratch folder shown at the run directory's path (src/executor/agentRunFolder.ts); the real one stays hidden. */
  runFolder?: { path: string; scratch: string };
}

const real = (p: string): string | null => {
  try {
    return realpathSync(p);
  } catch {
    return null; // not there: nothing to mount
  }
};

/**
 * The bwrap arguments for a sandbox, before the command. Paths that do not exist are left out. Mounts go
 * shallowest first, so the deeper one wins wherever two nest: a clone or a worktree inside the hidden home
 * is there again, and a home inside the repository or inside Maestro's own folder stays hidden.
 */
export function bwrapArgs(spec: SandboxSpec, worktreeDir: string | null, cwd: string, runFolder?: RunSandbox['runFolder']): string[] {
  const mounts: Array<{ path: string; args: string[] }> = [];
  const add = (paths: readonly string[], args: (r: string) => string[]) => {
    for (const p of paths) {
      const r = real(p);
      if (r) mounts.push({ path: r, args: args(r) });
    }
  };
  add(maestroCodeRoots(), (r) => ['--ro-bind', r, r]);
  add(spec.hide, (r) => (statSync(r).isDirectory() ? ['--tmpfs', r] : ['--ro-bind', '/dev/null', r]));
  // The folder it starts in is readable wherever it lies (a planner's throwaway checkout in the home).
  add([...spec.readOnly, cwd], (r) => ['--ro-bind', r, r]);
  add([...spec.writable, ...(worktreeDir ? [worktreeDir] : [])], (r) => ['--bind', r, r]);
  // Over the writable worktree: the pointer the worker's own git follows there stays the daemon's.
  if (worktreeDir) add([join(worktreeDir, '.git')], (r) => ['--ro-bind', r, r]);
  if (runFolder) add([runFolder.path], (r) => ['--bind', runFolder.scratch, r]);
  const depth = (p: string) => p.split('/').length;
  const ordered = mounts.map((m, i) => ({ ...m, i })).sort((a, b) => depth(a.path) - depth(b.path) || a.i - b.i);
  return [
    '--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc',
    '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
    ...ordered.flatMap((m) => m.args),
    ...scratchCaches(spec),
    '--chdir', real(cwd) ?? cwd,
  ];
}

/**
 * Download and build caches tools keep in the home, which a tool cannot do without writing (`npm install`
 * fails on a read-only ~/.npm): in the sandbox each is a folder of its own /tmp. Not the user's, even
 * writable: what the user later installs or builds from must not be the agent's to write. A cache the
 * config makes writable (its folder's name among `writable`) stays where the user keeps it.
 */
const SCRATCH_CACHES = [
  { variable: 'npm_config_cache', folder: '.npm' },
  { variable: 'YARN_CACHE_FOLDER', folder: 'yarn' },
  { variable: 'GOCACHE', folder: 'go-build' },
];

function scratchCaches(spec: SandboxSpec): string[] {
  const kept = new Set(spec.writable.map((w) => w.split('/').pop()));
  return SCRATCH_CACHES.filter((c) => !kept.has(c.folder)).flatMap((c) => ['--setenv', c.variable, `/tmp/${c.folder}`]);
}

/** The command to start, in `cwd`, in place of `file args`: itself without a sandbox, bwrap with one. */
export function sandboxed(sandbox: RunSandbox | null | undefined, cwd: string, file: string, args: readonly string[]): { file: string; args: string[] } {
  if (!sandbox) return { file, args: [...args] };
  const { scoped } = socketScopeOf(sandbox.spec);
  const net = networkSetup(sandbox.spec.network);
  // Perl scopes the abstract sockets, runs the network relay, or both, then the command.
  const script = [...(scoped ? [SCOPE_SCRIPT] : []), net.relayArgs ? RELAY_SCRIPT : EXEC_SCRIPT].join(' ');
  const perl = scoped || net.relayArgs ? [PERL, '-e', script, ...(net.relayArgs ?? [])] : [];
  // PERL_BADLANG=0: no warning from perl on every run where the locale named is not installed.
  const quiet = perl.length ? ['--setenv', 'PERL_BADLANG', '0'] : [];
  return { file: 'bwrap', args: [...bwrapArgs(sandbox.spec, sandbox.worktree, cwd, sandbox.runFolder), ...net.bwrap, ...quiet, '--', ...perl, file, ...args] };
}

export const PERL = '/usr/bin/perl';

/**
 * Run first inside the sandbox, it puts itself and what it starts in a Landlock domain scoped for abstract Unix
 * sockets and signals (Linux 6.12+, ABI 6); the command follows (EXEC_SCRIPT, or the network relay's RELAY_SCRIPT,
 * sandboxNet/relay.ts). A shared network namespace shares the abstract sockets: an X11 display's (`@/tmp/.X11-unix/X0`, a keyboard into every
 * window of the person's session), an older D-Bus session bus's. In the domain those made outside refuse to connect
 * (EPERM); what the run makes and connects to itself works. Perl because it is there on every Linux that has git,
 * and its `syscall` reaches Landlock; the numbers are the same on every architecture (asm-generic). bwrap has set
 * no_new_privs already, as Landlock wants.
 */
const SCOPE_SCRIPT = [
  'my $attr = pack("QQQ", 0, 0, 3);', // handled_access_fs, handled_access_net, scoped: abstract Unix sockets | signals
  'my $fd = syscall(444, $attr, length $attr, 0);', // landlock_create_ruleset
  'if ($fd < 0) { print STDERR "maestro sandbox: landlock_create_ruleset: $!\\n"; exit 1 }',
  'if (syscall(446, $fd, 0) != 0) { print STDERR "maestro sandbox: landlock_restrict_self: $!\\n"; exit 1 }',
].join(' ');

let scopeProblem: string | null | undefined;

/**
 * Why a run's abstract sockets cannot be scoped here (null: they are, in every sandbox this process starts): asked
 * once per process, by starting the scope in a sandbox around `true`.
 */
export function socketScopeProblem(env?: NodeJS.ProcessEnv): string | null {
  if (scopeProblem !== undefined) return scopeProblem;
  if (!existsSync(PERL)) return (scopeProblem = `${PERL} is not there to scope them (install perl)`);
  const probe = spawnSync('bwrap', [...bwrapArgs({ kind: 'bwrap', hide: [], readOnly: [], writable: [] }, null, dirname(PERL)), '--setenv', 'PERL_BADLANG', '0', '--', PERL, '-e', `${SCOPE_SCRIPT} ${EXEC_SCRIPT}`, 'true'], { env, encoding: 'utf8', timeout: 30_000 });
  if (!probe.error && probe.status === 0) return (scopeProblem = null);
  const why = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim();
  return (scopeProblem = `this kernel cannot scope them with Landlock (Linux 6.12 or later can): ${why}`);
}

/**
 * What the spec says of its abstract sockets, or, when it says nothing, this process's own probe (a bwrap and a perl
 * start, once per process). The daemon settles it at start and each sandbox spec it hands on carries its answer.
 */
export function socketScopeOf(spec: SandboxSpec, env?: NodeJS.ProcessEnv): SocketScope {
  if (spec.sockets) return spec.sockets;
  const reason = socketScopeProblem(env);
  return reason === null ? { scoped: true } : { scoped: false, reason };
}

const under = (p: string, folder: string) => p === folder || p.startsWith(folder.endsWith(sep) ? folder : folder + sep);

/** Whether `p` (absolute) lies in a folder the sandbox hides, as given or as its links resolve. */
function inHidden(spec: SandboxSpec): (p: string) => boolean {
  const hidden = spec.hide.map((h) => real(h) ?? resolve(h));
  return (p) => hidden.some((h) => under(p, h));
}

/**
 * The run's sandbox with an agent tool's own state folders writable: its sessions and settings (without
 * them a resume finds no conversation). One that is missing is made, as the tool would on its first
 * run, since only a folder that exists can be mounted. One inside a hidden folder stays hidden
 * (CLAUDE_CONFIG_DIR pointed into the Maestro home would show the agent every run there). `locked`: what in
 * them starts programs or instructs every session of the tool (its hooks, MCP servers, the user's own
 * instructions), read-only: the folders are the user's too, and a run that planted a hook there would have it
 * run outside any sandbox the next time the user starts the tool. bwrap can lock only what exists, so what is
 * missing of it is made first, empty (makeMissing). `lockedIfThere`: the same, but what the tool itself makes
 * and fills (Claude Code's plugins, its state file): read-only where it exists, never made. The files in the
 * writable folders that a locked settings file names by path are read-only too (scriptsNamedBy).
 */
export function withStateDirs(sandbox: RunSandbox | undefined, dirs: readonly string[], locked: readonly string[] = [], lockedIfThere: readonly string[] = [], home: string = homedir()): RunSandbox | undefined {
  if (!sandbox) return sandbox;
  const isHidden = inHidden(sandbox.spec);
  const usable: string[] = [];
  for (const dir of dirs) {
    if (!isAbsolute(dir) || isHidden(resolve(dir))) continue;
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const r = real(dir);
    if (r && !isHidden(r)) usable.push(r);
  }
  const shown = (p: string) => isAbsolute(p) && !isHidden(resolve(p)) && !isHidden(real(p) ?? resolve(p));
  makeMissing(locked.filter(shown));
  const readOnly = [...locked, ...lockedIfThere, ...scriptsNamedBy(locked, usable, home)].filter(shown);
  return { ...sandbox, spec: { ...sandbox.spec, writable: [...sandbox.spec.writable, ...usable], readOnly: [...sandbox.spec.readOnly, ...readOnly] } };
}

/** A settings file is a few KiB: one larger is not read for the files it names. */
const MAX_SETTINGS_SCAN_BYTES = 1024 * 1024;

/** At most this many missing scripts one sandbox makes (a settings file naming thousands makes no more). */
const MAX_MISSING_SCRIPTS = 32;

/**
 * The files in `dirs` (real paths) that the settings files among `locked` name by path: a status line's command
 * (`bash ~/.claude/statusline-command.sh`, which Claude Code's /statusline writes), a key helper, a notify program.
 * The tool runs them in the user's own sessions, outside any sandbox, so a run must not rewrite them though their
 * folder is writable, nor create one that is named but not there yet: such a name with an extension (`.sh`, `.py`)
 * is made an empty file first (one without could be a folder the tool makes later: left alone). Read as text,
 * whatever the format (JSON, TOML): an absolute path or one from `~/` or `$HOME/` (`home`: the tool's HOME).
 */
function scriptsNamedBy(locked: readonly string[], dirs: readonly string[], home: string): string[] {
  const named = new Set<string>();
  let made = 0;
  for (const file of locked) {
    let text: string;
    try {
      const st = statSync(file);
      if (!st.isFile() || st.size > MAX_SETTINGS_SCAN_BYTES) continue;
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // not there: it names nothing
    }
    for (const [word] of text.matchAll(/(?:~|\$HOME|\$\{HOME\})?\/[^\s"'`;|&()<>,[\]{}=]+/g)) {
      const path = resolve(word.replace(/^(~|\$HOME|\$\{HOME\})(?=\/)/, home));
      const inDirs = (r: string) => dirs.some((d) => r !== d && under(r, d));
      const r = real(path);
      if (r) {
        if (inDirs(r) && statSync(r).isFile()) named.add(r);
        continue;
      }
      const planned = realOfMissing(path);
      if (!planned || !inDirs(planned) || !extname(planned) || /[*?]/.test(planned) || made >= MAX_MISSING_SCRIPTS) continue;
      makeMissing([planned]);
      made++;
      if (real(planned) === planned && statSync(planned).isFile()) named.add(planned);
    }
  }
  return [...named];
}

/** Where a missing path would be: its nearest existing folder's real path with the rest after it (null: none is). */
function realOfMissing(path: string): string | null {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    const r = real(at);
    if (r) return join(r, ...rest.reverse());
    if (dirname(at) === at) return null;
    rest.push(basename(at));
  }
}

/**
 * Makes each of `paths` that is missing, empty: a run could otherwise create it (hooks in a settings file the user
 * never had, which their next session runs outside any sandbox). A name with an extension is a file (`{}` for
 * JSON, else empty), one without a folder: empty, each means what its absence does. What is there stays as it is.
 */
function makeMissing(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      if (!extname(path)) mkdirSync(path, { mode: 0o700 });
      else writeFileSync(path, /\.jsonc?$/.test(path) ? '{}\n' : '', { flag: 'wx', mode: 0o600 });
    } catch {
      // There already (EEXIST), or not makeable here (a read-only folder, a file where a folder goes): nor by the run.
    }
  }
}

/** Folders every process shares its temporary files and sockets in (a tmux server's, say): never shown whole. */
const SHARED_TEMP = new Set(['/', '/tmp', '/var/tmp', '/dev/shm', real(tmpdir()) ?? tmpdir()]);

/**
 * The run's sandbox with an agent tool the user's settings or PATH name readable, wherever it lies: the
 * folder of the executable (or script) and of what it links to (a wrapper's own files sit beside it).
 * The tool found on PATH is the tool that runs, though it lies in /tmp, which the sandbox replaces.
 * Never a hidden folder, nor a shared temporary folder itself.
 */
export function withTool(sandbox: RunSandbox | undefined, executable: string | null): RunSandbox | undefined {
  if (!sandbox || !executable || !isAbsolute(executable)) return sandbox;
  const isHidden = inHidden(sandbox.spec);
  const target = real(executable);
  const dirs = [...new Set([dirname(executable), ...(target ? [dirname(target)] : [])])].filter((d) => !isHidden(d) && !isHidden(real(d) ?? d) && !SHARED_TEMP.has(real(d) ?? d));
  return { ...sandbox, spec: { ...sandbox.spec, readOnly: [...sandbox.spec.readOnly, ...dirs] } };
}

/**
 * What bwrap says when the command it was to start is not there (or not executable): the ENOENT or EACCES
 * a spawn of the command itself would have failed with; null for any other exit. bwrap exits 1 after it.
 */
export function sandboxStartError(code: number | null, stderr: readonly string[]): NodeJS.ErrnoException | null {
  if (code !== 1) return null;
  const line = stderr.find((l) => /^(bwrap|maestro sandbox): execvp .*: (No such file or directory|Permission denied)$/.test(l));
  if (!line) return null;
  const errno = line.endsWith('Permission denied') ? 'EACCES' : 'ENOENT';
  return Object.assign(new Error(line), { code: errno, syscall: 'spawn' });
}

/**
 * Why bwrap cannot start a sandbox here, with what to do about it, or null when it can: it is installed,
 * and the kernel lets this user create the namespaces. The daemon asks at start: a sandbox asked for by
 * name that cannot work stops it; the default ("auto") runs agents unsandboxed and says this.
 */
export function sandboxProblem(env: NodeJS.ProcessEnv): string | null {
  // The same namespaces and mounts a run's sandbox asks for, around `true`.
  const probe = spawnSync('bwrap', [...bwrapArgs({ kind: 'bwrap', hide: [], readOnly: [], writable: [] }, null, '/'), '--', 'true'], { env, encoding: 'utf8', timeout: 30_000 });
  if (probe.error && (probe.error as NodeJS.ErrnoException).code === 'ENOENT') {
    return 'bwrap is not installed (not found on PATH). Install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)';
  }
  if (!probe.error && probe.status === 0) return null;
  const why = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim();
  return `bwrap cannot start a sandbox here: ${why}. Unprivileged user namespaces may be off (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap)`;
}
