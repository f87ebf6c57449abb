/**
 * What git keeps in plain files, read without a git process: a worktree's link to its repository and where a
 * HEAD and a ref point. Every process costs a task this machine's fork and exec (about 13 ms of CPU for a git),
 * and these reads come several times per task. Each answer is null (or undefined) when the files do not settle
 * it (a reftable repository, a `.git` that is not what Maestro makes); the caller then asks git.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { canonical } from '../lib/paths.js';

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The folder a worktree's `.git` file names (`gitdir: <path>`), or null when `.git` is missing, a folder, or says nothing. */
export function gitdirPointer(worktree: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(worktree, '.git'), 'utf8');
  } catch {
    return null; // no .git at all (ENOENT), or a folder (EISDIR): not a linked worktree
  }
  const gitdir = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  return gitdir ? resolve(worktree, gitdir) : null;
}

function readTrimmed(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * The commit `ref` (a full name, `refs/heads/main`) points at in the repository whose git dir is `gitDir`: its loose
 * file, else its line in packed-refs. Null when it does not exist; undefined when the files cannot say (no git dir
 * there, a reftable repository, a symbolic ref, an unreadable file): ask git then.
 */
export function readRef(gitDir: string, ref: string): string | null | undefined {
  if (existsSync(join(gitDir, 'reftable'))) return undefined;
  let loose: string;
  try {
    loose = readFileSync(join(gitDir, ref), 'utf8').trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR') return undefined;
    return packedRef(gitDir, ref);
  }
  return SHA.test(loose) ? loose : undefined;
}

/**
 * The object a short name (`main`, `origin/main`, a tag) names, looked up as git does (`$GIT_DIR/<name>`, then under
 * refs/, refs/tags/, refs/heads/, refs/remotes/, and refs/remotes/<name>/HEAD; the first found wins) in the common
 * git dir `common`; a full id as it is. Undefined when git must be asked: a revision expression (`main~1`), a
 * pseudo-ref (HEAD, which a worktree keeps for itself), or a ref the files cannot say (readRef).
 */
export function nameOnDisk(common: string, name: string): string | undefined {
  if (SHA.test(name)) return name;
  if (!/^[A-Za-z0-9._/-]+$/.test(name) || name.includes('..') || /^[A-Z_]+$/.test(name)) return undefined;
  for (const ref of [name, `refs/${name}`, `refs/tags/${name}`, `refs/heads/${name}`, `refs/remotes/${name}`, `refs/remotes/${name}/HEAD`]) {
    const at = readRef(common, ref);
    if (at !== null) return at;
  }
  return undefined;
}

function packedRef(gitDir: string, ref: string): string | null | undefined {
  let packed: string;
  try {
    packed = readFileSync(join(gitDir, 'packed-refs'), 'utf8');
  } catch (err) {
    // No packed-refs in a git dir: the ref does not exist. No git dir at all (a `.git` file or none): ask git.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' && statSync(gitDir, { throwIfNoEntry: false })?.isDirectory() ? null : undefined;
  }
  // `<sha> <ref>` per line; `# pack-refs with: …` and `^<peeled sha>` lines are not refs.
  for (const line of packed.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0 && line.slice(at + 1) === ref) return SHA.test(line.slice(0, at)) ? line.slice(0, at) : undefined;
  }
  return null;
}

/**
 * The commit HEAD is at in `path` (a repository's top, or a linked worktree), read from its HEAD file and, for a
 * branch, the branch's ref in the repository's common git dir (readRef). Null when git must be asked (a branch
 * with no commit yet is one: git says so).
 */
export function headCommit(path: string): string | null {
  const gitDir = gitdirPointer(path) ?? join(path, '.git');
  const head = readTrimmed(join(gitDir, 'HEAD'));
  if (!head) return null;
  if (SHA.test(head)) return head; // detached
  const ref = /^ref: (refs\/heads\/\S+)$/.exec(head)?.[1];
  if (!ref) return null;
  return readRef(commonGitDir(gitDir), ref) ?? null;
}

/** The repository's own git dir for a git dir: a linked worktree's names it in its `commondir` file; else itself. */
export function commonGitDir(gitDir: string): string {
  const common = readTrimmed(join(gitDir, 'commondir'));
  return common ? resolve(gitDir, common) : gitDir;
}

/**
 * Whether a linked worktree's admin folder is whole: git has written its HEAD and commondir (a concurrent
 * `git worktree add` writes them last), so git run in the worktree finds its repository.
 */
export function adminWhole(admin: string): boolean {
  return readTrimmed(join(admin, 'HEAD')) !== null && readTrimmed(join(admin, 'commondir')) !== null;
}

/**
 * Whether `repoPath`'s git dir (a `.git` folder) holds a registration for a worktree at `path`: an admin folder
 * under `.git/worktrees/` whose `gitdir` file names `path/.git` (symlinks resolved). Null when `.git` is not a
 * repository's folder (a worktree's or a submodule's gitfile): then git's own listing decides.
 */
export function registeredAt(repoPath: string, path: string): boolean | null {
  const admins = join(repoPath, '.git', 'worktrees');
  let names: string[];
  try {
    names = readdirSync(admins);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') return null;
    // No worktrees folder: none registered, provided `.git` is a repository's folder.
    return readTrimmed(join(repoPath, '.git', 'HEAD')) === null ? null : false;
  }
  return names.some((name) => namesBack(join(admins, name), path));
}

/**
 * Whether a worktree admin folder's `gitdir` file names `path/.git` back, symlinks resolved. `path` may be gone (a
 * stale registration): its parent, which exists, resolves them.
 */
export function namesBack(admin: string, path: string): boolean {
  const back = readTrimmed(join(admin, 'gitdir'));
  if (back === null) return false; // git's record was pruned
  return canonical(resolve(admin, back)) === canonical(join(canonical(dirname(path)), basename(path), '.git'));
}
