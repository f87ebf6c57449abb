/**
 * The settings every git command Maestro runs is given, so that git runs no program the repository's own settings
 * name: no hook, no file-system monitor, no filter, diff or merge driver. Their programs are found from the
 * working tree git runs in, and an agent writes that tree: with `core.hooksPath=.husky` (husky's setting) an
 * agent's `.husky/post-commit` ran, outside the sandbox and as the person, at the worker's own commit, read the
 * daemon's token and approved its own task; with a clean filter `sh tools/clean.sh`, an edit of that script ran
 * at `git add`. `--no-verify` skips two hooks of the dozen git runs.
 *
 * - Hooks: none (core.hooksPath=/dev/null). Maestro's own steps are its hooks (`.maestro/hooks…`, sandboxed).
 * - The file-system monitor: off (core.fsmonitor=false).
 * - A filter driver: its clean, smudge and process commands empty, so the content passes as it is. A driver the
 *   repository marks `required` (an encryption filter, say) then fails the command instead: git refuses to pass
 *   such content through, which is what the person asked for.
 * - A diff driver: textconv is `cat` (the content as it is) and the external command empty (Maestro's diffs ask
 *   for --no-ext-diff; one that did not would fail, not run it).
 * - A merge driver: git's own three-way merge (`git merge-file`), what git does for a driver it does not know.
 * - A signing program named by a relative path: the format's default program instead (inertSigningArgs).
 * - An ssh command, askpass, credential helper, upload-pack or receive-pack program, or a protocol allowed, set in
 *   a file of the working tree: the person's own instead, or git's default (inertTransport.ts).
 *
 * Kept: git-lfs's and git-crypt's drivers, named as their installers write them (`git-lfs clean -- %f`,
 * `"git-crypt" smudge`): programs on the machine, not in the repository, without which a checkout holds pointer
 * or encrypted files and a commit would store a large file whole, or a secret in the clear.
 *
 * The drivers are read with one `git config` per repository, again when one of its settings files changes, a
 * file they include among them (`include.path = ../.gitconfig`, a committed file a merge changes).
 */
import { readFileSync, statSync, type BigIntStats } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { destinationsFromTree, inertTransportArgs, packPrograms, TRANSPORT_KEYS, type PackPrograms } from './inertTransport.js';
import { commonGitDir, gitdirPointer } from './onDisk.js';

/** What git is given for every command, whatever the repository. */
export const INERT_ALWAYS = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'];

/** The driver commands' keys, for `git config --get-regexp`. */
export const DRIVER_KEYS = '^(filter|diff|merge)\\..+\\.(clean|smudge|process|textconv|command|driver)$';
/** The programs git signs with (a commit when commit.gpgSign is on), and the command that names an ssh key. */
const SIGNING_KEYS = '^gpg\\.(.+\\.)?program$|^gpg\\.ssh\\.defaultkeycommand$';
/**
 * What is read for a repository (`git config -z --show-origin --get-regexp READ_KEYS`): the drivers, the signing
 * programs, the programs that reach a remote (inertTransport.ts), and the includes whose files may change them.
 */
export const READ_KEYS = `${DRIVER_KEYS}|${SIGNING_KEYS}|${TRANSPORT_KEYS}|^include(if\\..+)?\\.path$`;
const SIGNING_KEY = new RegExp(SIGNING_KEYS);

/** One setting of that read: the file it came from (null when not a file: `-c`), its key and value. */
export interface ConfigEntry {
  origin: string | null;
  key: string;
  value: string;
}

/** `git config -z --show-origin --get-regexp` output, `<origin>\0<key>\n<value>\0` each, as entries. */
export function configEntries(output: string): ConfigEntry[] {
  const parts = output.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [origin, pair] = [parts[i]!, parts[i + 1]!];
    const newline = pair.indexOf('\n');
    entries.push({ origin: origin.startsWith('file:') ? origin.slice('file:'.length) : null, key: newline < 0 ? pair : pair.slice(0, newline), value: newline < 0 ? '' : pair.slice(newline + 1) });
  }
  return entries;
}

const INCLUDE_KEY = /^include(if\..+)?\.path$/;

/**
 * The files the entries' include directives name, as git finds them from `cwd`: `~/` in the home, a relative path
 * beside the file that includes it. Whether an includeIf's condition holds is not asked: a file that may be read
 * is watched.
 */
export function includedFiles(entries: readonly ConfigEntry[], cwd: string, home: string): string[] {
  return entries
    .filter((e) => INCLUDE_KEY.test(e.key) && e.origin !== null && e.value)
    .map((e) => (e.value.startsWith('~/') ? join(home, e.value.slice(2)) : isAbsolute(e.value) ? e.value : resolve(dirname(resolve(cwd, e.origin!)), e.value)));
}

/**
 * `fromTree`, and the files a file of the working tree includes, and those they include in turn: the tree's
 * `.gitconfig` naming `path = /elsewhere/more.cfg` (a file the agent wrote in its own worktree) chose what that file
 * sets, wherever it lies. A file the person's settings include too counts as the tree's then: it is read the same.
 */
export function fromTreeOrIncluded(entries: readonly ConfigEntry[], cwd: string, home: string, fromTree: (origin: string | null) => boolean): (origin: string | null) => boolean {
  const chosen = new Set<string>();
  const tainted = (origin: string | null) => origin !== null && (fromTree(origin) || chosen.has(resolve(cwd, origin)));
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of entries) {
      if (!tainted(e.origin)) continue;
      for (const file of includedFiles([e], cwd, home)) if (!chosen.has(file)) (chosen.add(file), (grew = true));
    }
  }
  return tainted;
}

/** Programs whose drivers are kept, by the name of the program a command starts. */
const KEPT_PROGRAMS = new Set(['git-lfs', 'git-crypt']);

/** The `-c` pairs that make the drivers among `entries` (configEntries) run nothing of the repository's. */
export function inertDriverArgs(entries: readonly Pick<ConfigEntry, 'key' | 'value'>[]): string[] {
  const drivers = new Map<string, { kind: string; commands: string[] }>();
  for (const { key, value } of entries) {
    const kind = key.slice(0, key.indexOf('.'));
    const name = key.slice(kind.length + 1, key.lastIndexOf('.'));
    if (!['filter', 'diff', 'merge'].includes(kind) || !name) continue;
    const driver = drivers.get(`${kind}.${name}`) ?? { kind, commands: [] };
    driver.commands.push(value);
    drivers.set(`${kind}.${name}`, driver);
  }
  const args: string[] = [];
  for (const [id, { kind, commands }] of drivers) {
    if (commands.every(isKeptProgram)) continue;
    const settings =
      kind === 'filter'
        ? { clean: '', smudge: '', process: '' }
        : kind === 'diff'
          ? { textconv: 'cat', command: '' }
          : { driver: 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B' };
    for (const [key, value] of Object.entries(settings)) args.push('-c', `${id}.${key}=${value}`);
  }
  return args;
}

/** The program each signing format runs when none is named (git's own defaults). */
const SIGNING_DEFAULTS: Record<string, string> = { 'gpg.program': 'gpg', 'gpg.openpgp.program': 'gpg', 'gpg.x509.program': 'gpgsm', 'gpg.ssh.program': 'ssh-keygen' };

/**
 * The `-c` pairs that keep a signing program named by a relative path (`gpg.program = tools/sign.sh`, found from
 * the worktree git runs in) from running: the format's default program instead, found on PATH (absolute folders
 * only, src/lib/agentEnv.ts), and no key command. A program by name or absolute path is the machine's, and kept.
 * The key command takes arguments (`sh tools/key.sh` names the worktree's script through a program on PATH), so
 * it is kept only from a file no agent writes: one set in a file of the working tree (`fromTree`, a committed
 * `.gitconfig` the settings include, which a merge changes) is dropped whatever it says.
 */
export function inertSigningArgs(entries: readonly (Pick<ConfigEntry, 'key' | 'value'> & { origin?: string | null })[], fromTree: (origin: string | null) => boolean = () => false): string[] {
  const args: string[] = [];
  for (const { key, value, origin } of entries) {
    if (!SIGNING_KEY.test(key)) continue;
    const keyCommand = key === 'gpg.ssh.defaultkeycommand';
    const program = keyCommand ? (value.trim().split(/\s+/)[0] ?? '') : value.trim();
    if (!(keyCommand && fromTree(origin ?? null)) && (!program.includes('/') || program.startsWith('/'))) continue;
    args.push('-c', keyCommand ? 'gpg.ssh.defaultKeyCommand=' : `${key}=${SIGNING_DEFAULTS[key] ?? 'gpg'}`);
  }
  return args;
}

/**
 * Whether a setting's file (its origin as `git config --show-origin` names it from `cwd`) lies in the repository's
 * main working tree, outside its git folder `common`: a file an agent's merged change can write. A bare
 * repository (the daemon's clone of a shared remote) has no working tree.
 */
export function inWorkingTree(common: string, cwd: string): (origin: string | null) => boolean {
  const gitDir = resolve(cwd, common);
  const tree = basename(gitDir) === '.git' ? dirname(gitDir) : null;
  const inside = (dir: string, path: string) => path === dir || path.startsWith(`${dir}${sep}`);
  return (origin) => {
    if (origin === null || tree === null) return false;
    const file = resolve(cwd, origin);
    return inside(tree, file) && !inside(gitDir, file);
  };
}

/** Whether a command starts a kept program: `git-lfs …`, `git lfs …`, `"git-crypt" …`, or one by its absolute path. */
function isKeptProgram(command: string): boolean {
  const words = command.trim().split(/\s+/).map((w) => w.replace(/^["']|["']$/g, ''));
  const program = words[0] ?? '';
  // A bare name is found on PATH; a path is taken only when absolute (a relative one is the working tree's).
  if (program.includes('/') && !program.startsWith('/')) return false;
  const name = basename(program);
  return KEPT_PROGRAMS.has(name) || (name === 'git' && words[1] === 'lfs');
}

/**
 * The settings files a command in `cwd` reads, for knowing when its drivers may have changed: the repository's
 * (through a worktree's `.git` file, or `cwd` being a git folder itself), its worktree's own, the person's and
 * the system's. The repository's git folder names the cache entry; null when `cwd` is none of those (a folder
 * above a repository, one not made yet), whose drivers are read each time.
 */
export function configFiles(cwd: string, env: NodeJS.ProcessEnv): { repo: string; files: string[] } | null {
  const gitDir = gitdirPointer(cwd) ?? (isDir(join(cwd, '.git')) ? join(cwd, '.git') : isFile(join(cwd, 'HEAD')) ? cwd : null);
  if (!gitDir) return null;
  const common = commonGitDir(gitDir);
  const home = env.HOME ?? homedir();
  const global = env.GIT_CONFIG_GLOBAL ? [env.GIT_CONFIG_GLOBAL] : [join(home, '.gitconfig'), join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'config')];
  const system = env.GIT_CONFIG_NOSYSTEM ? [] : [env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig'];
  return { repo: common, files: [join(common, 'config'), join(gitDir, 'config.worktree'), ...global, ...system] };
}

/** Settings files up to this size are stamped by what they say; a larger one by its inode, size and time. */
const STAMPED_BY_CONTENT = 256 * 1024;

/**
 * The files' settings now: a change of any changes it. A file git rewrote with the same settings keeps it: git
 * rewrites `.git/config` (a new inode) at every `git branch -D`, one per merged task, and each process then read
 * the drivers again with one more `git config` (bench:daemon: 82 of 766 processes for 8 demo scenarios).
 */
export function filesStamp(files: readonly string[]): string {
  return files.map(fileStamp).join('|');
}

function fileStamp(file: string): string {
  const s = statOf(file);
  if (!s) return '-';
  if (s.isFile() && s.size <= STAMPED_BY_CONTENT) {
    try {
      const text = readFileSync(file, 'latin1');
      return `=${text.length}:${text}`; // its length first: no two lists of files read the same
    } catch {
      // Gone or unreadable since the stat: its identity says so.
    }
  }
  return `${s.ino}:${s.size}:${s.mtimeNs}`;
}

/** What a command is given: `-c` pairs before it, and the pack programs to name on its command line (withPackPrograms). */
export interface InertArgs {
  config: string[];
  packPrograms: PackPrograms;
  /** Settings of the working tree that say where a fetch or push goes (destinationsFromTree): such a command is refused. */
  destinations: string[];
}

/**
 * The `-c` pairs for a command in `cwd` with the environment `env`: INERT_ALWAYS, the drivers' (inertDriverArgs), the
 * signing programs' (inertSigningArgs) and the transport programs' (inertTransportArgs), read through `read`
 * (`git config -z --show-origin --get-regexp READ_KEYS` there; null when it failed) once per repository and
 * settings: its settings files (configFiles) and the files they include, as the read found them. A failed read is
 * not kept: the command it was for fails the same way, or the next one reads again.
 */
export function inertArgsCache(read: (cwd: string, env: NodeJS.ProcessEnv) => Promise<string | null>): (cwd: string, env: NodeJS.ProcessEnv) => Promise<InertArgs> {
  const known = new Map<string, { stamp: string; included: string[]; args: Promise<InertArgs> }>();
  const stampOf = (files: readonly string[], included: readonly string[]) => `${filesStamp(files)}#${filesStamp(included)}`;
  return (cwd, env) => {
    const where = configFiles(cwd, env);
    const hit = where && known.get(where.repo);
    if (where && hit && hit.stamp === stampOf(where.files, hit.included)) return hit.args;
    // Stamped before the read, so a change while git reads is a change next time; the included files once it names them.
    const before = where ? filesStamp(where.files) : '';
    const entry = { stamp: `${before}#`, included: [] as string[], args: Promise.resolve<InertArgs>({ config: [], packPrograms: new Map(), destinations: [] }) };
    entry.args = read(cwd, env).then((out) => {
      if (out === null && where && known.get(where.repo) === entry) known.delete(where.repo);
      const entries = configEntries(out ?? '');
      entry.included = includedFiles(entries, cwd, env.HOME ?? homedir());
      entry.stamp = `${before}#${filesStamp(entry.included)}`;
      const fromTree = where ? fromTreeOrIncluded(entries, cwd, env.HOME ?? homedir(), inWorkingTree(where.repo, cwd)) : () => false;
      const config = [...INERT_ALWAYS, ...inertDriverArgs(entries), ...inertSigningArgs(entries, fromTree), ...inertTransportArgs(entries, fromTree, env)];
      return { config, packPrograms: packPrograms(entries, fromTree), destinations: destinationsFromTree(entries, fromTree) };
    });
    if (where) known.set(where.repo, entry);
    return entry.args;
  };
}

/** A path's stat, or null when there is nothing there (ENOENT, or ENOTDIR: a file on the way). */
function statOf(path: string): BigIntStats | null {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return null;
  }
}

function isDir(path: string): boolean {
  return statOf(path)?.isDirectory() ?? false;
}

function isFile(path: string): boolean {
  return statOf(path)?.isFile() ?? false;
}
