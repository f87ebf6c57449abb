/** Real git repositories for tests. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './db.js';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com' } }).trim();
}

/** A repository on `main` with one commit holding `files`. */
/** `parent`: where the repository goes (the system's temporary folder unless a test needs it outside /tmp). */
export function makeRepo(files: Record<string, string> = { 'README.md': '# test\n' }, parent?: string): string {
  const dir = tempDir('maestro-repo-', parent);
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

/**
 * The remote the multihost suites and bench:multihost share between daemons. The tasks there touch disjoint
 * files, so a branch taken over long after it was made (main moved dozens of merges past it, as with 200
 * tasks) is brought up to date rather than refused: the divergence limits are lifted.
 */
export function sharedRemote(root: string): string {
  return bareRemote(root, {
    'README.md': '# shared\n',
    '.maestro/config.json': JSON.stringify({ limits: { divergenceCommits: 100_000, divergenceFiles: 100_000 } }),
  });
}
