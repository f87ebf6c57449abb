/**
 * How far main has moved away from a task branch, and bringing main into the
 * branch without `git merge` (reserved for the conflict pipeline): merge-tree
 * computes the merged tree without touching any checkout; a clean result is
 * committed with commit-tree and the worktree moved to it.
 */
import { MaestroError } from '../core/errors.js';
import { git, revParse, trackedChanges } from './git.js';

export interface Divergence {
  /** Commits on base that the branch does not have. */
  commits: number;
  /** Files base changed since the merge-base. */
  files: number;
}

export async function measureDivergence(worktree: string, base: string): Promise<Divergence> {
  const { stdout: count } = await git(worktree, ['rev-list', '--count', `HEAD..${base}`]);
  const { stdout: names } = await git(worktree, ['diff', '--name-only', `HEAD...${base}`]);
  return { commits: Number(count.trim()), files: names.split('\n').filter(Boolean).length };
}

/** What `commitsBehind` found: the commits on base the branch lacks, or which of the two refs does not resolve. */
export type Behind = { commits: number } | { missing: 'branch' | 'base' | 'both' };

/**
 * How many commits `baseRef` has that `branchRef` lacks (those since the merge base of the two: the base's
 * moves since the branch was cut or last took it in). One `git rev-list` (a few ms); only when it fails are
 * the two refs resolved, to say which is missing. Both are full ref names (`refs/heads/…`), never options.
 */
export async function commitsBehind(repo: string, branchRef: string, baseRef: string): Promise<Behind> {
  const counted = await git(repo, ['rev-list', '--count', '--end-of-options', `${branchRef}..${baseRef}`], { okCodes: [128] });
  if (counted.code === 0) return { commits: Number(counted.stdout.trim()) };
  const exists = async (ref: string) => (await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { okCodes: [1, 128] })).code === 0;
  const [branch, base] = [await exists(branchRef), await exists(baseRef)];
  if (branch && base) throw new MaestroError('GIT_FAILED', `git rev-list ${branchRef}..${baseRef} failed in ${repo}: ${counted.stderr.trim()}`);
  return { missing: !branch && !base ? 'both' : branch ? 'base' : 'branch' };
}

export interface MergePreview {
  clean: boolean;
  /** The merged tree when clean. */
  tree: string | null;
  conflictedFiles: string[];
}

/** Would merging `theirs` into `ours` conflict? Touches no checkout. */
export async function previewMerge(cwd: string, ours: string, theirs: string): Promise<MergePreview> {
  // -z: "tree\0name\0…", each name as it is (not quoted), as a conflict run and the person read it.
  const { stdout, code } = await git(cwd, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs], { okCodes: [1] });
  const [tree, ...files] = stdout.split('\0').filter(Boolean);
  return code === 0 ? { clean: true, tree: tree ?? null, conflictedFiles: [] } : { clean: false, tree: null, conflictedFiles: files };
}

export type SyncOutcome =
  | { kind: 'up-to-date' }
  | { kind: 'merged'; sha: string }
  | { kind: 'conflict'; conflictedFiles: string[] };

/**
 * Brings `base` into the worktree's branch when it merges cleanly; reports the conflicts otherwise.
 * `base` is read once: another process may move it meanwhile (a daemon fetching or pushing its clone
 * while a worker syncs), and a merged tree of one main under the parent of a later one would undo,
 * on the branch, whatever main gained in between.
 */
export async function syncWithBase(worktree: string, base: string): Promise<SyncOutcome> {
  const baseSha = await revParse(worktree, base);
  const { stdout: behind } = await git(worktree, ['rev-list', '--count', `HEAD..${baseSha}`]);
  if (Number(behind.trim()) === 0) return { kind: 'up-to-date' };
  const dirty = await trackedChanges(worktree);
  if (dirty.length) throw new Error(`cannot bring ${base} into ${worktree}: it has uncommitted changes (${dirty.slice(0, 3).join(', ')})`);
  const head = await revParse(worktree, 'HEAD');
  const preview = await previewMerge(worktree, head, baseSha);
  if (!preview.clean || !preview.tree) return { kind: 'conflict', conflictedFiles: preview.conflictedFiles };
  const { stdout: sha } = await git(worktree, ['commit-tree', preview.tree, '-p', head, '-p', baseSha, '-m', `Merge ${base} into task branch`]);
  // --keep moves HEAD and updates the files, refusing if that would lose local changes.
  await git(worktree, ['reset', '--keep', sha.trim()]);
  return { kind: 'merged', sha: sha.trim() };
}
