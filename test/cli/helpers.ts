/** Runs the `maestro` CLI as a child process, the way a user does, and makes temporary git repositories. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { tempDir } from '../helpers/db.js';
import { maestroArgs } from '../helpers/maestro.js';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment a CLI child sees: none of the caller's Maestro or agent settings leak in, and none of the
 * agent CLIs the test suite installs (`npm test` puts node_modules/.bin on PATH; a user's shell does not).
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('MAESTRO_') || k === 'ANTHROPIC_API_KEY' || k === 'CLAUDE_CODE_OAUTH_TOKEN' || k === 'CLAUDE_CONFIG_DIR') delete env[k];
  const path = (env.PATH ?? '').split(delimiter).filter((dir) => !dir.endsWith(join('node_modules', '.bin'))).join(delimiter);
  return { ...env, PATH: path, HOME: tempDir('maestro-cli-home-'), ...extra };
}

/** `cwd`: the folder the CLI runs in (a command that picks the project holding it); Maestro's own checkout by default. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = cleanEnv(), cwd = ROOT): ChildProcess {
  return spawn(process.execPath, [...maestroArgs(), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the CLI to completion (asynchronously: the daemon under test lives in this process). */
export function cli(args: string[], env?: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
  const child = startCli(args, env, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

export async function cliJson<T = Record<string, unknown>>(args: string[], env?: NodeJS.ProcessEnv, cwd?: string): Promise<{ code: number | null; body: T; stderr: string }> {
  const r = await cli([...args, '--json'], env, cwd);
  let body: T;
  try {
    body = JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`maestro ${args.join(' ')} --json printed no JSON (exit ${r.code}).\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return { code: r.code, body, stderr: r.stderr };
}

/** A git repository with one commit. */
export function gitRepo(files: Record<string, string> = { 'README.md': '# demo\n' }): string {
  const dir = tempDir('maestro-cli-repo-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  for (const [path, text] of Object.entries(files)) {
    execFileSync('mkdir', ['-p', join(dir, path, '..')]);
    writeFileSync(join(dir, path), text);
  }
  git('add', '-A');
  git('-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '-q', '-m', 'initial');
  return dir;
}

/** Resolves once the child's stdout contains `text`; rejects if it exits first. */
export function waitForOutput(child: ChildProcess, text: string, sink: { out: string }): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      if (sink.out.includes(text)) {
        child.stdout!.off('data', check);
        child.off('close', onClose);
        resolvePromise();
      }
    };
    const onClose = (code: number | null) => reject(new Error(`CLI exited (${code}) before printing ${JSON.stringify(text)}; it printed: ${sink.out}`));
    child.stdout!.on('data', check);
    child.on('close', onClose);
    check();
  });
}

/**
 * The CLI as the user of a daemon's home runs it: MAESTRO_HOME points at the
 * home, so the CLI reads the daemon's token from `$MAESTRO_HOME/token`, as a
 * user's CLI does. An env given to a call keeps its own settings on top.
 */
export function cliFor(home: string): { cli: typeof cli; cliJson: typeof cliJson; startCli: typeof startCli } {
  const withHome = (env: NodeJS.ProcessEnv = cleanEnv()) => ({ MAESTRO_HOME: home, ...env });
  return {
    cli: (args, env, cwd) => cli(args, withHome(env), cwd),
    cliJson: (args, env, cwd) => cliJson(args, withHome(env), cwd),
    startCli: (args, env, cwd) => startCli(args, withHome(env), cwd),
  };
}
