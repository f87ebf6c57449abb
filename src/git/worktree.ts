/**
 * A worktree per task version: `<worktreeRoot>/<taskId>-v<version>` on branch
 * `maestro/<taskId>-v<version>`, created from the base branch the first time
 * and reused after (a restart, a review round). The main checkout is only read.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { canonical } from '../lib/paths.js';
import { basename, dirname, join, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { assertRepository, git, removeTree, revParse } from './git.js';
import { tipsOf } from './merge.js';
import { shownName, statusNames } from './gitNames.js';
import { indexLockOf, lockAgeMs } from './indexLock.js';
import { adminWhole, gitdirPointer, namesBack, registeredAt } from './onDisk.js';

export interface WorktreeSpec {
  repoPath: string;
  worktreeRoot: string;
  taskId: string;
  version: number;
  baseBranch: string;
  /** Read where a reused worktree's branch left the base (its merge-base); a review, which does not use it, saves a git process. Default true. */
  readBase?: boolean;
}

export interface Worktree {
  path: string;
  branch: string;
  /** True when this call created it (false: it was already there). */
  created: boolean;
  /** Created with a new branch at `baseSha`: it cannot have diverged from the base yet. */
  newBranch: boolean;
  /** The base commit it was created from, or the current merge-base when reused (null: reused, and readBase was false). */
  baseSha: string | null;
  /** Where a folder that stood in its place, no longer a worktree, was moved before it was made again. */
  movedAside?: string;
}

/** The folder under the daemon's home holding a project's task worktrees (each named by worktreeDirName). */
export function worktreeRoot(home: string, projectId: string): string {
  return join(home, 'worktrees', projectId);
}

export function worktreeDirName(taskId: string, version: number): string {
  return `${taskId}-v${version}`;
}

export function taskBranch(taskId: string, version: number): string {
  return `maestro/${taskId}-v${version}`;
}

/**
 * The base's commit and whether the task's branch exists, read from git's files (or one git process) when the base
 * is a branch, local (`main`) or a clone's remote-tracking one (`origin/main`), as everywhere Maestro sets it. A tag
 * of that name comes first for git, so it is resolved by git, as is any other revision the base names.
 */
async function baseAndBranch(repoPath: string, base: string, branch: string): Promise<{ baseSha: string; branchExists: boolean }> {
  const tips = await tipsOf(repoPath, [`refs/tags/${base}`, `refs/heads/${base}`, `refs/remotes/${base}`, `refs/heads/${branch}`]);
  const asBranch = tips.has(`refs/tags/${base}`) ? undefined : (tips.get(`refs/heads/${base}`) ?? tips.get(`refs/remotes/${base}`));
  const baseSha = asBranch ?? (await revParse(repoPath, base).catch((err: unknown) => {
    // A project registered before its base branch was checked (projects.ts), or whose branch was deleted since.
    throw new MaestroError('BAD_INPUT', `the project's base branch ${base} is not in ${repoPath}: name the branch its tasks start from and merge into (maestro project config set baseBranch <branch>)`, { cause: err });
  }));
  return { baseSha, branchExists: tips.has(`refs/heads/${branch}`) };
}

/**
 * The worktrees of a repository that must exist: one `git worktree list` serves as the check
 * (a git process each run saved); only when it fails does assertRepository say what is wrong.
 */
async function worktreesOfRepository(repoPath: string): Promise<Array<{ path: string; branch: string | null }>> {
  try {
    return await listWorktrees(repoPath);
  } catch (err) {
    await assertRepository(repoPath);
    throw err;
  }
}

/** Lists the worktrees git knows for this repository (path → branch or null). */
export async function listWorktrees(repoPath: string): Promise<Array<{ path: string; branch: string | null }>> {
  const { stdout } = await gitPastAdds(repoPath, ['worktree', 'list', '--porcelain']);
  const out: Array<{ path: string; branch: string | null }> = [];
  for (const block of stdout.split('\n\n')) {
    const path = /^worktree (.+)$/m.exec(block)?.[1];
    if (!path) continue;
    const ref = /^branch refs\/heads\/(.+)$/m.exec(block)?.[1] ?? null;
    out.push({ path, branch: ref });
  }
  return out;
}

/**
 * What git says when a command that reads every worktree's admin folder (`worktree add|list|remove`,
 * `branch -D`, a fetch's connectivity check) meets another process's `git worktree add` half-way (another
 * worker's run): that folder's `commondir` is still empty. The command stops before it changes anything,
 * except that an add with `-b` has made its branch (addWorktree takes it up), and the other add takes
 * milliseconds.
 */
const ADD_RACE = /(?:bad object |failed to read \S*?)worktrees\/([^/\s]+)\/(HEAD|commondir|gitdir)\b/;
const ADD_RACE_TRIES = 5;

/** A worktree whose admin folder a failed git command read half-written, and the file it read. */
export interface HalfAdded {
  name: string;
  file: 'HEAD' | 'commondir' | 'gitdir';
}

export function halfAddedWorktree(message: string): HalfAdded | null {
  const m = ADD_RACE.exec(message);
  return m ? { name: m[1]!, file: m[2] as HalfAdded['file'] } : null;
}

/** Runs `step` again, a moment later, while it fails on another add half-way (ADD_RACE). */
export async function pastOtherAdds<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (attempt >= ADD_RACE_TRIES || !halfAddedWorktree((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** git in a repository whose worktrees other processes add: see pastOtherAdds. */
const gitPastAdds = (repoPath: string, args: string[]) => pastOtherAdds(() => git(repoPath, args));

/** A task's worktree, made or reused; each try starts over from what git has now (see pastOtherAdds). */
export function ensureWorktree(spec: WorktreeSpec): Promise<Worktree> {
  return pastOtherAdds(() => addWorktree(spec));
}

async function addWorktree(spec: WorktreeSpec): Promise<Worktree> {
  const path = resolve(spec.worktreeRoot, worktreeDirName(spec.taskId, spec.version));
  const branch = taskBranch(spec.taskId, spec.version);
  const reused = async (): Promise<Worktree> => {
    const baseSha = spec.readBase === false ? null : (await git(path, ['merge-base', 'HEAD', spec.baseBranch])).stdout.trim();
    return { path, branch, created: false, newBranch: false, baseSha };
  };
  // A worktree this repository registered, linked both ways and whole, read from disk: no git process (every
  // review, every later round).
  if (wholeAdmin(spec.repoPath, path)) return reused();
  // A registration of this path, also read from disk when the repository's .git is a folder; otherwise git lists
  // them (the path as it resolved it: a root reached through a symlink is the same folder).
  const known = registeredAt(spec.repoPath, path) ?? (await worktreesOfRepository(spec.repoPath)).some((w) => samePath(w.path, path));
  let movedAside: string | undefined;
  if (known && existsSync(path)) {
    if (await isWorkingWorktree(path)) return reused();
    // Registered, but the folder is no longer that worktree: it was deleted under a run and the agent's
    // next write made a plain folder in its place. Reused as it is, every git there fails for good.
    movedAside = moveAsideBroken(path);
  }
  // A folder git forgot (or a registration whose folder is gone) is stale: clear both.
  if (known) await forgetRegistration(spec.repoPath, path);
  if (existsSync(path)) await removeTree(path);
  mkdirSync(spec.worktreeRoot, { recursive: true });
  const { baseSha, branchExists } = await baseAndBranch(spec.repoPath, spec.baseBranch, branch);
  const newBranch = !branchExists;
  if (newBranch) await git(spec.repoPath, ['worktree', 'add', '-b', branch, '--end-of-options', path, baseSha]);
  else await git(spec.repoPath, ['worktree', 'add', '--end-of-options', path, branch]);
  return { path, branch, created: true, newBranch, baseSha, ...(movedAside ? { movedAside } : {}) };
}

/**
 * The admin folder of `path` when it is a worktree of `repoPath` that git can work in, read from disk: its `.git`
 * file names an admin folder in the repository's own `.git` folder, that folder names it back (worktreeLinked), and
 * git has written its HEAD and commondir. Null otherwise, and for a repository whose `.git` is not a folder (then
 * git's listing decides).
 */
function wholeAdmin(repoPath: string, path: string): string | null {
  const admin = gitdirPointer(path);
  return admin && samePath(dirname(dirname(admin)), join(repoPath, '.git')) && linkedAt(admin, path) && adminWhole(admin) ? admin : null;
}

/** The same folder or file, symlinks resolved; a missing one is the same only as itself. */
const samePath = (a: string, b: string) => canonical(a) === canonical(b);

/**
 * Whether `path` is still linked to its repository as a worktree, read from disk (no git process): its `.git`
 * file names an admin folder `<git dir>/worktrees/<name>` whose `gitdir` file names this `.git` back. A plain
 * folder fails at once; without this, git run there looks in the parent folders for a repository.
 */
export function worktreeLinked(path: string): boolean {
  const admin = gitdirPointer(path);
  return admin !== null && linkedAt(admin, path);
}

/** Whether `admin`, which `path`'s `.git` file names, is a `worktrees/<name>` folder that names `path` back. */
const linkedAt = (admin: string, path: string) => basename(dirname(admin)) === 'worktrees' && namesBack(admin, path);

/**
 * Where a linked worktree's HEAD is, read from its admin folder's HEAD file (no git process): the branch it
 * is on, or the commit it is detached at. Null when the folder is not a linked worktree. An agent runs
 * commands as the user and may `git checkout` another branch or detach HEAD; what it wrote must then not be
 * committed there (see commitWork).
 */
export function headOf(path: string): { branch: string } | { detachedAt: string } | null {
  const admin = gitdirPointer(path);
  if (!admin) return null;
  let head: string;
  try {
    head = readFileSync(join(admin, 'HEAD'), 'utf8').trim();
  } catch {
    return null;
  }
  const ref = /^ref: refs\/heads\/(.+)$/.exec(head)?.[1];
  return ref ? { branch: ref } : { detachedAt: head };
}

/**
 * Whether a folder git lists as a worktree is still one: linked (worktreeLinked), and git run there takes it
 * as the top of its work tree (the admin folder is whole: HEAD, commondir). One git process; none for a plain
 * folder. The admin folder is this repository's: git listed this path, from the records in its own git dir.
 */
async function isWorkingWorktree(path: string): Promise<boolean> {
  if (!worktreeLinked(path)) return false;
  const { code, stdout } = await git(path, ['rev-parse', '--show-toplevel'], { okCodes: [128] });
  return code === 0 && samePath(stdout.trim(), path);
}

/**
 * Moves a folder that stands where a worktree should be, but is not one, to `<path>.broken-<ms>`; an empty one
 * is just removed. Nothing in it can be committed (git cannot work there), and a retry starts the agent again
 * from the branch's last commit, so the folder is not needed; but it holds what the agent wrote after the
 * worktree was deleted (and anything a person put there), and that is theirs to look at and delete, not ours.
 * The startup prune leaves it alone (its name is no task version's).
 */
function moveAsideBroken(path: string): string | undefined {
  if (statSync(path).isDirectory() && !readdirSync(path).length) {
    rmSync(path, { recursive: true, force: true });
    return undefined;
  }
  const aside = `${path}.broken-${Date.now()}`;
  renameSync(path, aside);
  return aside;
}

/** How old a worktree's index.lock is, when a run starts, before it counts as a killed git's. */
export const DEAD_INDEX_LOCK_MS = 10_000;

/**
 * A git killed in the middle of `add` or `commit` (its run's worker was killed) leaves the
 * worktree's index.lock for good, and every later git that writes the index fails on it (`git
 * stash` even with exit 1 and no message). At the start of a run nothing else works in the
 * worktree, so a lock that stays DEAD_INDEX_LOCK_MS old is removed; a younger one is waited out.
 */
async function clearDeadIndexLock(worktree: string): Promise<void> {
  if (!gitdirPointer(worktree)) return;
  const lock = indexLockOf(worktree);
  for (;;) {
    const age = lockAgeMs(lock);
    if (age === null) return; // no lock, or its git just finished
    if (age >= DEAD_INDEX_LOCK_MS) return rmSync(lock, { force: true });
    await new Promise((r) => setTimeout(r, Math.min(500, DEAD_INDEX_LOCK_MS - age + 10)));
  }
}

/** Where set-aside leftovers are kept: Maestro's refs, not the repository's stash list (refs/stash), which is the person's. */
export const SET_ASIDE_REFS = 'refs/maestro/set-aside/';
/** Set-aside refs kept per repository; the oldest beyond this are deleted when another is made. */
export const SET_ASIDE_KEEP = 50;

/**
 * Sets aside what an earlier run left uncommitted in a task version's worktree (a run killed or
 * cancelled between writing files and committing them), so the next run starts from the branch's
 * last commit. Nothing is deleted: everything (untracked files, and a merge a conflict run left
 * half-done, staged as it is) goes into a stash commit under SET_ASIDE_REFS, named in the run's
 * `set-aside` phase; `git stash apply <ref>` brings it back. It is not pushed on the stash list
 * (`refs/stash` is shared by every worktree, the person's main checkout included, where a `git
 * stash pop` would have brought a killed run's files into their work).
 * Returns the paths set aside and the ref; none when the worktree is clean.
 */
export async function setAsideLeftovers(worktree: string, note: string): Promise<{ files: string[]; ref: string | null }> {
  await clearDeadIndexLock(worktree);
  // -z: each name as it is. Without it git C-quoted a name past ASCII or with a control character, and the run's
  // set-aside phase named `"\303\251t\303\251.txt"` (quotes included). As bytes (latin1), so that a name that is not
  // UTF-8 is shown as the review's diff shows it (gitNames.ts shownName), not with U+FFFD.
  const { stdout } = await git(worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=all'], { encoding: 'latin1' });
  const files = statusNames(stdout).map(shownName);
  if (!files.length) return { files, ref: null };
  // Staged as they are: untracked files, and unmerged paths (markers or a half-made resolution).
  await git(worktree, ['add', '-A']);
  const sha = (await git(worktree, ['stash', 'create', note])).stdout.trim();
  // Nothing a stash takes: a submodule with files changed inside it (status names it, `add -A` stages nothing). Its
  // own repository keeps those files, and the worktree's are as the branch has them.
  if (!sha) return { files: [], ref: null };
  const ref = `${SET_ASIDE_REFS}${Date.now()}-${randomBytes(3).toString('hex')}`;
  await git(worktree, ['update-ref', '-m', note, ref, sha]);
  // Back to the branch's last commit; a half-done merge is forgotten with it.
  await git(worktree, ['reset', '--hard', '--quiet']);
  await pruneSetAside(worktree);
  return { files, ref };
}

async function pruneSetAside(worktree: string): Promise<void> {
  // Named by the time they were made, in ms (commit dates have whole seconds): newest first by name.
  const { stdout } = await git(worktree, ['for-each-ref', '--sort=-refname', '--format=%(refname)', SET_ASIDE_REFS]);
  for (const old of stdout.split('\n').filter(Boolean).slice(SET_ASIDE_KEEP)) await git(worktree, ['update-ref', '-d', old]);
}

/**
 * A throwaway detached checkout of `base` at `<worktreeRoot>/<name>`, for agents
 * that only read (the planner): whatever such an agent does, the main checkout
 * is not where it does it. Remove it with removeWorktree.
 */
export function detachedWorktree(repoPath: string, worktreeRoot: string, name: string, base: string): Promise<string> {
  return pastOtherAdds(() => addDetached(repoPath, worktreeRoot, name, base));
}

async function addDetached(repoPath: string, worktreeRoot: string, name: string, base: string): Promise<string> {
  const path = resolve(worktreeRoot, name);
  if ((await worktreesOfRepository(repoPath)).some((w) => resolve(w.path) === path)) await gitPastAdds(repoPath, ['worktree', 'remove', '--force', '--end-of-options', path]);
  if (existsSync(path)) await removeTree(path);
  mkdirSync(worktreeRoot, { recursive: true });
  await git(repoPath, ['worktree', 'add', '--detach', '--end-of-options', path, base]);
  return path;
}

export async function removeWorktree(repoPath: string, path: string): Promise<void> {
  const admin = wholeAdmin(repoPath, path);
  if (admin && !existsSync(join(admin, 'locked'))) {
    // What `git worktree remove --force` does to an unlocked worktree, in one `rm` instead of a git process
    // (removeTree: the daemon's event loop does not stop for the files): the folder, then git's record of it
    // (a kill in between leaves a registration without a folder, which a prune clears).
    await removeTree(path, admin);
  } else if (existsSync(path)) {
    // A locked one, or one git must be asked about: git says why it will not, or removes it.
    await gitPastAdds(repoPath, ['worktree', 'remove', '--force', '--end-of-options', path]);
  } else {
    await forgetRegistration(repoPath, path); // a registration whose folder is already gone
  }
}

/**
 * Forgets the registration of a worktree at `path` whose folder is gone (or moved aside): its own admin folder,
 * found on disk. `git worktree prune` did it, and took with it the admin folder that another worker's
 * `git worktree add` had just made and not yet written into (git prunes one without a `gitdir` file), and that
 * add failed: "could not open '.git/worktrees/<x>/locked'" (the multihost suite, two runs starting at once). A
 * locked registration stays, as with git (the add then says why); a repository whose `.git` is not a folder is
 * left to git's prune.
 */
async function forgetRegistration(repoPath: string, path: string): Promise<void> {
  const gitDir = join(repoPath, '.git');
  if (!statSync(gitDir, { throwIfNoEntry: false })?.isDirectory()) {
    await git(repoPath, ['worktree', 'prune']);
    return;
  }
  const admins = join(gitDir, 'worktrees');
  for (const name of existsSync(admins) ? readdirSync(admins) : []) {
    const admin = join(admins, name);
    if (namesBack(admin, path) && !existsSync(join(admin, 'locked'))) rmSync(admin, { recursive: true, force: true });
  }
}

/**
 * Removes the worktrees under `worktreeRoot` that are no longer needed, and folders there that git does not know
 * (a crash between mkdir and add). `needed` is asked once, after the listing, which of the names found
 * (`<taskId>-v<version>`, `<taskId>-plan`) to keep: a worktree added meanwhile belongs to work that `needed` then
 * sees in flight. Branches stay: they hold the work.
 */
export async function pruneOrphanWorktrees(repoPath: string, worktreeRoot: string, needed: (names: readonly string[]) => Promise<Iterable<string>>): Promise<string[]> {
  // As git lists worktrees: a root reached through a symlink, resolved.
  const root = canonical(worktreeRoot);
  await git(repoPath, ['worktree', 'prune']);
  const found = new Map<string, { path: string; registered: boolean }>();
  const listed = await listWorktrees(repoPath);
  for (const w of listed) {
    const path = resolve(w.path);
    if (!path.startsWith(root + '/')) continue;
    const name = path.slice(root.length + 1);
    // Task worktrees (on maestro/ branches) and detached planner checkouts (<taskId>-plan).
    if (w.branch?.startsWith('maestro/') || (w.branch === null && name.endsWith('-plan'))) found.set(name, { path, registered: true });
  }
  const registered = new Set(listed.map((w) => resolve(w.path)));
  for (const name of existsSync(root) ? readdirSync(root) : []) {
    const path = join(root, name);
    if (!registered.has(path) && /^[A-Za-z0-9_-]+-(v\d+|plan)$/.test(name)) found.set(name, { path, registered: false });
  }
  if (!found.size) return [];
  const keep = new Set(await needed([...found.keys()]));
  const removed: string[] = [];
  for (const [name, { path, registered: known }] of found) {
    if (keep.has(name)) continue;
    if (known) await gitPastAdds(repoPath, ['worktree', 'remove', '--force', '--end-of-options', path]);
    else await removeTree(path);
    removed.push(path);
  }
  return removed;
}
