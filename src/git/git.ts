/**
 * The one way Maestro runs git: the system binary through execFile with an
 * argument array, never a shell string, so nothing from a task title or a file
 * name can become a command. Errors name the command and the directory.
 */
import { existsSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { MaestroError } from '../core/errors.js';
import { processAgentEnv } from '../lib/agentEnv.js';
import { execOnce, type ExecOutcome, type ExecRequest } from '../lib/spawner/exec.js';
import type { Spawner } from '../lib/spawner/spawner.js';
import { INERT_ALWAYS, READ_KEYS, inertArgsCache } from './inertConfig.js';
import { refusedTransport, withPackPrograms } from './inertTransport.js';
import { headCommit } from './onDisk.js';

export interface GitOptions {
  /** Exit codes that are answers, not failures (e.g. 1 from merge-tree on conflicts). */
  okCodes?: number[];
  env?: NodeJS.ProcessEnv;
  /** The git binary; tests use a missing one to check the error. */
  gitBinary?: string;
  /** Written to git's stdin (e.g. `cat-file --batch-check`). */
  input?: string;
  /** A command that talks to a remote: stopped when git writes nothing for this long (see ExecRequest.stallMs). */
  stallMs?: number;
  /** 'latin1': stdout's bytes kept as they are, one char each (`Buffer.from(stdout, 'latin1')`). */
  encoding?: 'utf8' | 'latin1';
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

// Commits made by Maestro need an identity even on machines without a global one.
const IDENTITY_ENV = {
  GIT_AUTHOR_NAME: 'Maestro',
  GIT_AUTHOR_EMAIL: 'maestro@localhost',
  GIT_COMMITTER_NAME: 'Maestro',
  GIT_COMMITTER_EMAIL: 'maestro@localhost',
};

/** Sees every git call and its wall time (the benchmark measures Maestro's git share with it). */
export type GitObserver = (call: { cwd: string; args: string[]; ms: number; code: number }) => void;
const observers = new Set<GitObserver>();

export function observeGit(observer: GitObserver): () => void {
  observers.add(observer);
  return () => {
    observers.delete(observer);
  };
}

export function git(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  if (!observers.size) return runGit(cwd, args, options);
  const started = performance.now();
  const report = (code: number) => {
    const call = { cwd, args, ms: performance.now() - started, code };
    for (const o of observers) o(call);
  };
  return runGit(cwd, args, options).then(
    (r) => (report(r.code), r),
    (err: unknown) => {
      report(-1);
      throw err;
    },
  );
}

const spawners: Spawner[] = [];

/** Runs git through `spawner` (the daemon's helper process) until the returned function is called. */
export function runGitThrough(spawner: Spawner): () => void {
  spawners.push(spawner);
  return () => {
    const at = spawners.lastIndexOf(spawner);
    if (at >= 0) spawners.splice(at, 1);
  };
}

const GIT_ENV = ['GIT_*', 'SSH_AUTH_SOCK', 'SSH_AGENT_PID'];

/** A command through the daemon's helper process (runGitThrough) when there is one, else started from this one. */
function execute(req: ExecRequest): Promise<ExecOutcome> {
  const spawner = spawners.at(-1);
  return spawner ? spawner.run(req) : execOnce(req);
}

/**
 * `rm -rf` of folders (a worktree), in this order, in a process of its own through the same helper as git.
 * A worktree can hold tens of thousands of files (an agent's npm install), and removing them in the daemon
 * stops its event loop for as long: 30,000 files took 458 ms in rmSync, and Node 20's fs.promises.rm left
 * gaps of up to 525 ms between turns; with the process, 10 ms.
 */
export async function removeTree(...paths: string[]): Promise<void> {
  const req: ExecRequest = { file: 'rm', args: ['-rf', '--', ...paths], cwd: '/', env: { ...processAgentEnv(), LC_ALL: 'C' }, maxBuffer: 64 * 1024 };
  const r = await execute(req);
  if (r.errno || r.code !== 0) throw new Error(`rm -rf ${paths.join(' ')} failed (${r.errno ?? r.signal ?? `exit ${r.code}`}): ${r.stderr.trim() || r.message || ''}`);
}

/** Agent commits are authored by Maestro unless the environment says otherwise; git sees git's and ssh's settings, not the daemon's secrets. */
function gitEnv(options: GitOptions): NodeJS.ProcessEnv {
  return { ...IDENTITY_ENV, ...processAgentEnv({ pass: GIT_ENV }), ...options.env, GIT_TERMINAL_PROMPT: '0' };
}

/** The `-c` pairs that keep git from running what the repository's settings name (inertConfig.ts), per repository. */
const inertArgs = inertArgsCache(async (cwd, env) => {
  const r = await execute({ file: 'git', args: [...INERT_ALWAYS, 'config', '-z', '--show-origin', '--get-regexp', READ_KEYS], cwd, env, maxBuffer: 4 * 1024 * 1024 });
  // Exit 1: no driver at all.
  return !r.errno && r.code === 0 ? r.stdout : !r.errno && r.code === 1 ? '' : null;
});

async function runGit(cwd: string, args: string[], options: GitOptions): Promise<GitResult> {
  // An agent writes the tree the programs the repository's settings name are found in: git runs none of them.
  const env = gitEnv(options);
  const inert = await inertArgs(cwd, env);
  const refused = refusedTransport(args, inert.destinations);
  if (refused) throw new MaestroError('GIT_FAILED', `git ${args.join(' ')} was not run in ${cwd}: ${refused}`, { details: { cwd, args: args.slice(0, ARGS_SHOWN) } });
  const req: ExecRequest = { file: options.gitBinary ?? 'git', args: [...inert.config, ...withPackPrograms(args, inert.packPrograms)], cwd, env, maxBuffer: 64 * 1024 * 1024, input: options.input, stallMs: options.stallMs, encoding: options.encoding };
  return gitResult(cwd, args, options, await execute(req));
}

function gitResult(cwd: string, args: string[], options: GitOptions, outcome: ExecOutcome): GitResult {
  const { stdout, stderr, errno } = outcome;
  if (errno === 'ENOENT') {
    if (!existsSync(cwd)) throw new MaestroError('NOT_A_REPOSITORY', `${cwd} does not exist`, { details: { path: cwd } });
    throw new MaestroError('GIT_MISSING', `git was not found on PATH (needed to run "git ${args[0]}" in ${cwd}); install git`);
  }
  const code = outcome.code ?? -1;
  if (!errno && code === 0) return { stdout, stderr, code };
  if (!errno && options.okCodes?.includes(code)) return { stdout, stderr, code };
  const why =
    errno === 'STALLED'
      ? `no answer from the remote: ${outcome.message ?? ''}`
      : errno
        ? `${errno}: ${outcome.message ?? ''}`
        : outcome.signal
          ? `ended by ${outcome.signal}`
          : `exit ${code}`;
  const said = withoutProgress(stderr);
  const command = args.length > ARGS_SHOWN ? `${args.slice(0, ARGS_SHOWN).join(' ')} … (${args.length - ARGS_SHOWN} more)` : args.join(' ');
  throw new MaestroError('GIT_FAILED', `git ${command} failed in ${cwd} (${why}): ${lastOf(said || stdout.trim())}`, {
    details: { cwd, args: args.slice(0, ARGS_SHOWN), code, stderr: lastOf(said) },
  });
}

/**
 * What a failure message quotes of git's arguments and output, at most: a failed diff with nothing on stderr put
 * its whole output (a 65 MB file's content) in the message, and a listing's thousands of pathspecs came with it.
 */
const ARGS_SHOWN = 40;
const SAID_CHARS = 4_000;

/** The end of what git said (where its error is), marked as cut when longer than SAID_CHARS. */
function lastOf(text: string): string {
  return text.length > SAID_CHARS ? `… ${text.slice(-SAID_CHARS)}` : text;
}

/** What git said, without its `--progress` meter ("Receiving objects:  45% (9/20)", redrawn after each carriage return). */
function withoutProgress(stderr: string): string {
  return stderr
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r') + 1))
    .filter((line) => !/^(remote: )?[A-Za-z ]+: +\d+% \(\d+\/\d+\)|^(remote: )?[A-Za-z ]+: \d+, done\.|^(remote: )?Total \d+ \(delta/.test(line))
    .join('\n')
    .trim();
}

/** Runs git in `path`, answering NOT_A_REPOSITORY when it is not a folder or git says it is not a repository. */
async function gitInRepository(path: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    throw new MaestroError('NOT_A_REPOSITORY', `${path} is not a directory`, { details: { path } });
  }
  try {
    return await git(path, args, options);
  } catch (err) {
    if (err instanceof MaestroError && err.code === 'GIT_FAILED') {
      throw new MaestroError('NOT_A_REPOSITORY', `${path} is not a git repository`, { details: { path }, cause: err });
    }
    throw err;
  }
}

/** Refuses a path that is not the top of a git work tree, with a clear error. */
export async function assertRepository(path: string, options: GitOptions = {}): Promise<string> {
  return (await gitInRepository(path, ['rev-parse', '--show-toplevel'], options)).stdout.trim();
}

/** The files git tracks in `path`: the index's in a work tree, main's (HEAD) in a bare repository, which has no index. */
export async function trackedFiles(path: string): Promise<string[]> {
  const bare = (await gitInRepository(path, ['rev-parse', '--is-bare-repository'])).stdout.trim() === 'true';
  // Without the repository's file-system monitor: core.fsmonitor names a program ls-files would start (a listing runs nothing).
  return (await git(path, bare ? ['ls-tree', '-r', '--name-only', 'HEAD'] : ['-c', 'core.fsmonitor=false', 'ls-files'])).stdout.split('\n').filter(Boolean);
}

/** The commit HEAD is at in `path`, read from git's files when they settle it (onDisk.headCommit), else from git. */
export async function headSha(path: string): Promise<string> {
  return headCommit(path) ?? (await git(path, ['rev-parse', 'HEAD'])).stdout.trim();
}

export async function revParse(cwd: string, rev: string): Promise<string> {
  return (await git(cwd, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`])).stdout.trim();
}

export async function currentBranch(cwd: string): Promise<string | null> {
  const { stdout, code } = await git(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { okCodes: [1] });
  return code === 0 ? stdout.trim() : null;
}

/**
 * The branch a checkout is on (null when HEAD is detached) and its tracked changes, read with one
 * git process instead of three (assertRepository, currentBranch, trackedChanges): a merge starts
 * with this check, and every process the daemon starts forks the whole daemon. `untracked`: list the
 * untracked files too (not the ignored ones), each file of an untracked folder on its own, at the
 * cost of walking those folders; otherwise none are looked for.
 */
export async function checkoutState(path: string, options: { untracked?: boolean } = {}): Promise<{ branch: string | null; changes: string[]; untracked: string[] }> {
  // -z: paths as git has them, never quoted, so they compare with other git output.
  const { stdout } = await gitInRepository(path, ['status', '--porcelain=v1', '-z', '--branch', `--untracked-files=${options.untracked ? 'all' : 'no'}`]);
  const [header = '', ...entries] = stdout.split('\0');
  const changes: string[] = [];
  const untracked: string[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (!entry) continue;
    if (entry.startsWith('?? ')) untracked.push(entry.slice(3));
    else changes.push(entry);
    // A rename or a copy (`R  new`) is followed by the path it came from.
    if (/^(R|C|.R|.C)/.test(entry)) i++;
  }
  return { branch: branchOfStatusHeader(header), changes, untracked };
}

/** `## main...origin/main [ahead 1]`, `## main`, `## No commits yet on main`, `## HEAD (no branch)`. */
function branchOfStatusHeader(line: string): string | null {
  const head = line.replace(/^## /, '');
  if (head.startsWith('HEAD (no branch)')) return null;
  const unborn = /^(?:No commits yet|Initial commit) on (\S+)$/.exec(head);
  return unborn ? unborn[1]! : head.split('...')[0]!.split(' ')[0]!;
}

/** Tracked changes (staged or not). Untracked files do not make a checkout dirty for merging. */
export async function trackedChanges(cwd: string): Promise<string[]> {
  const { stdout } = await git(cwd, ['status', '--porcelain=v1', '--untracked-files=no']);
  return stdout.split('\n').filter(Boolean);
}
