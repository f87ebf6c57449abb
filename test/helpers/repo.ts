/** Real git repositories for tests. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './db.js';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com' } }).trim();
}

/** A repository on `main` with one commit holding `files`. */
export function makeRepo(files: Record<string, string> = { 'README.md': '# test\n' }): string {
  const dir = tempDir('maestro-repo-');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'user.email', 't@example.com');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** A bare repository at `<root>/remote.git` whose main holds one commit with `files`: the remote several daemons share. */
export function bareRemote(root: string, files: Record<string, string> = { 'README.md': '# shared\n' }): string {
  const remote = join(root, 'remote.git');
  git(root, 'clone', '-q', '--bare', makeRepo(files), remote);
  return remote;
}
