/**
 * The only code that changes the main checkout: merging a finished task
 * branch into the base branch, called by the daemon's MergeCoordinator. It
 * refuses a dirty checkout or one on another branch, and never leaves main
 * half-merged: a conflicting merge is aborted and reported. A merge git will
 * not start over files in the checkout (untracked ones the branch adds) is
 * refused like a dirty checkout, not taken for a conflict; so is one git cannot
 * write the index for (a lock file left there: REPO_LOCKED, indexLock.ts).
 */
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { checkoutState, git, headSha, revParse } from './git.js';
import { ignoredInTheWay, ignoredInTheWayError } from './ignoredInTheWay.js';
import { assertUnlocked, indexNotWritten, unwrittenIndex } from './indexLock.js';
import { NO_AUTO_MAINTENANCE } from './maintenance.js';
import { readRef } from './onDisk.js';

export interface MergeOptions {
  repoPath: string;
  branch: string;
  baseBranch: string;
  /** 'ff-only' refuses anything but a fast-forward; 'merge' fast-forwards when it can, else makes a merge commit; 'no-ff' always makes one. */
  strategy: 'ff-only' | 'merge' | 'no-ff';
  message?: string;
}

export interface MergeOutcome {
  sha: string;
  fastForward: boolean;
  previousSha: string;
}

export async function mergeIntoMain(options: MergeOptions): Promise<MergeOutcome> {
  await assertMainCheckout(options.repoPath, options.baseBranch);
  return mergeBranch(options);
}

/** Refuses a checkout that is locked (REPO_LOCKED), not on `baseBranch` or has uncommitted changes (DIRTY_MAIN): nothing may be merged into it. */
export async function assertMainCheckout(repoPath: string, baseBranch: string): Promise<void> {
  refuseCheckout(repoPath, baseBranch, await checkoutState(repoPath));
}

function refuseCheckout(repoPath: string, baseBranch: string, { branch: onBranch, changes: dirty }: { branch: string | null; changes: string[] }): void {
  // Before git is asked: a merge into a locked checkout exits 1 as a conflict does (indexLock.ts).
  assertUnlocked('the main checkout', repoPath);
  if (onBranch !== baseBranch) {
    throw new MaestroError('DIRTY_MAIN', `the main checkout ${repoPath} is on ${onBranch ?? 'a detached HEAD'}, not ${baseBranch}; check out ${baseBranch} there before merging`, {
      details: { repoPath, branch: onBranch, baseBranch },
    });
  }
  if (dirty.length) {
    throw new MaestroError('DIRTY_MAIN', `the main checkout ${repoPath} has uncommitted changes (${dirty.slice(0, 5).map((l) => l.slice(3)).join(', ')}); commit or stash them before merging`, {
      details: { repoPath, files: dirty.map((l) => l.slice(3)) },
    });
  }
}

/**
 * Before an approval, what would stop the merge it starts: assertMainCheckout's refusals, files the branch
 * adds that lie untracked in the checkout (git will not overwrite them), and git-ignored files where the branch
 * puts its own (git would overwrite them; the train stops the merge, ignoredInTheWay.ts). The same one git
 * process, listing the untracked files too; a second (what the branch adds) only when there are any; then
 * ignoredInTheWay's (the commits read from git's files).
 */
export async function assertMergeable(repoPath: string, baseBranch: string, branch: string): Promise<void> {
  const state = await checkoutState(repoPath, { untracked: true });
  refuseCheckout(repoPath, baseBranch, state);
  if (state.untracked.length) {
    const { stdout } = await git(repoPath, ['diff', '--name-only', '-z', '--no-renames', '--diff-filter=A', '--end-of-options', 'HEAD', branch, '--']);
    const added = new Set(stdout.split('\0').filter(Boolean));
    const untracked = state.untracked.filter((f) => added.has(f));
    if (untracked.length) throw filesInTheWay({ repoPath, branch }, { untracked, changed: [] });
  }
  const [head, tip] = [`refs/heads/${baseBranch}`, `refs/heads/${branch}`];
  const tips = await tipsOf(repoPath, [head, tip]);
  if (!tips.has(head) || !tips.has(tip)) return; // the branch gone: the merge says so itself
  const ignored = (await ignoredInTheWay(repoPath, tips.get(head)!, [tips.get(tip)!])).get(tips.get(tip)!);
  if (ignored) throw ignoredInTheWayError({ repoPath, branch }, ignored);
}

/**
 * Merges one branch into the checked-out base (call after assertMainCheckout). A train passes `head`
 * (main as its previous merge left it) and `tip` (the branch's commit, read with all the others in
 * one for-each-ref), so a merge costs one git process: the new HEAD is what git said it fast-forwarded to, or
 * main's ref file (git is asked only when that is packed).
 */
export async function mergeBranch(options: MergeOptions & { head?: string; tip?: string }): Promise<MergeOutcome> {
  const { repoPath, branch, baseBranch, strategy } = options;
  const previousSha = options.head ?? (await revParse(repoPath, 'HEAD'));
  const branchSha = options.tip ?? (await revParse(repoPath, branch));
  if (strategy === 'ff-only') {
    if (!(await isAncestor(repoPath, previousSha, branchSha))) {
      throw new MaestroError('NOT_FAST_FORWARD', `${branch} does not contain ${baseBranch}'s latest commit; bring ${baseBranch} into it (a conflict run) before merging`, {
        details: { branch, baseBranch },
      });
    }
  }
  // --ff fast-forwards when it can and otherwise commits with the message (whatever merge.ff says in the repository's config).
  const mode = strategy === 'no-ff' ? '--no-ff' : strategy === 'ff-only' ? '--ff-only' : '--ff';
  const message = options.message ?? `Merge ${branch}`;
  // Without auto-maintenance (a train runs one merge after another; the daemon runs it at its own pace). In git's own
  // words (LC_ALL=C), whatever the person's locale: a refusal is told from a conflict by what git said.
  // Exit 1 is a conflict or a refusal (a fast-forward's); 2, a refusal once a merge strategy was chosen.
  // --no-verify: the repository's pre-merge-commit and commit-msg hooks judge a person's commits (commitlint under
  // husky refuses "Merge maestro/…"), and a refusal was taken for a conflict, a conflict run started, again and
  // again; the work passed the project's checks, its reviews and the person (before:merge is Maestro's hook here),
  // and the agent's own commits are made with --no-verify too (commitAll).
  // --no-overwrite-ignore: a fast-forward over a git-ignored file the branch adds is refused as one over an untracked
  // file (the ort strategy does not heed it; the train looks for them first, ignoredInTheWay.ts).
  const merge = [...NO_AUTO_MAINTENANCE, 'merge', mode, '--no-verify', '--no-overwrite-ignore', '-m', message, '--end-of-options', branchSha];
  const { code, stdout, stderr } = await git(repoPath, merge, { okCodes: [1, 2], env: { LC_ALL: 'C' } });
  if (code !== 0) {
    const said = stdout + stderr;
    if (indexNotWritten(said)) throw await unwrittenIndex({ what: 'the main checkout', checkout: repoPath, unchanged: `this merge changed nothing in ${baseBranch}` }, said);
    // The files in conflict, read before the abort (the on:conflict hook is told them); none for a refused merge, and
    // none when git cannot list them (the merge's own failure is what is said).
    const conflictedFiles = await unmergedFiles(repoPath).catch((): string[] => []);
    // A conflict leaves the merge in progress: aborted, main is as it was. A refused merge never started.
    const aborted = (await git(repoPath, ['merge', '--abort'], { okCodes: [128] })).code === 0;
    throw failedMerge(options, code, aborted, said, conflictedFiles);
  }
  const sha = fastForwardedTo(stdout, previousSha, branchSha) ?? (await headSha(repoPath));
  return { sha, fastForward: sha === branchSha && strategy !== 'no-ff', previousSha };
}

/**
 * The branch's commit when git says it fast-forwarded main from `from` to it ("Updating <from>..<to>" then
 * "Fast-forward", LC_ALL=C; both abbreviations must match), else null and HEAD is read: a process saved on
 * the common merge, where main had not moved since the branch was made.
 */
function fastForwardedTo(said: string, from: string, to: string): string | null {
  const updating = /^Updating ([0-9a-f]{4,})\.\.([0-9a-f]{4,})$/m.exec(said);
  if (!updating || !/^Fast-forward\b/m.test(said)) return null;
  return from.startsWith(updating[1]!) && to.startsWith(updating[2]!) ? to : null;
}

/**
 * Why a merge failed. Files in the checkout in git's way (untracked ones the branch adds, or uncommitted
 * changes) are the person's to move, not a conflict: a conflict run, which costs model calls, changes nothing
 * there; they come back as DIRTY_MAIN, like a dirty checkout found before merging.
 */
function failedMerge(options: MergeOptions, code: number, aborted: boolean, said: string, conflictedFiles: string[]): MaestroError {
  const { repoPath, branch, baseBranch } = options;
  const inTheWay = filesInTheWayOf(said);
  if (!aborted && (inTheWay.untracked.length || inTheWay.changed.length)) return filesInTheWay({ repoPath, branch, unchanged: baseBranch }, inTheWay);
  const lastWords = said.trim().split('\n').slice(-3).join(' ');
  if (code === 1) return new MaestroError('MERGE_CONFLICT', `merging ${branch} into ${baseBranch} conflicts; main is unchanged: ${lastWords}`, { details: { branch, baseBranch, conflictedFiles } });
  return new MaestroError('GIT_FAILED', `git merge of ${branch} into ${baseBranch} failed in ${repoPath} (exit ${code}); main is unchanged: ${lastWords}`, { details: { branch, baseBranch, code } });
}

/**
 * The files git names when it will not start a merge over them (in English: the merge runs with LC_ALL=C), a tab
 * before each, after "The following untracked working tree files would be overwritten by merge:" (or removed),
 * "Updating the following directories would lose untracked files in them:", or "Your local changes to the
 * following files would be overwritten by merge:".
 */
export function filesInTheWayOf(said: string): { untracked: string[]; changed: string[] } {
  const out = { untracked: [] as string[], changed: [] as string[] };
  let into: string[] | null = null;
  for (const line of said.split('\n')) {
    if (into && line.startsWith('\t')) into.push(line.slice(1));
    else if (/untracked working tree files would be (overwritten|removed) by merge:$|would lose untracked files in them:$/.test(line)) into = out.untracked;
    else if (/local changes to the following files would be overwritten by merge:$/.test(line)) into = out.changed;
    else into = null;
  }
  return out;
}

/** DIRTY_MAIN naming the files in the way of merging `branch` and what to do; `unchanged`: the base branch, when the merge was tried. */
function filesInTheWay(where: { repoPath: string; branch: string; unchanged?: string }, files: { untracked: string[]; changed: string[] }): MaestroError {
  const names = (list: string[]) => list.slice(0, 10).join(', ') + (list.length > 10 ? ` and ${list.length - 10} more` : '');
  const what = [
    ...(files.untracked.length ? [`untracked files (${names(files.untracked)})`] : []),
    ...(files.changed.length ? [`uncommitted changes (${names(files.changed)})`] : []),
  ].join(' and ');
  const fix = !files.changed.length ? 'move or remove them' : !files.untracked.length ? 'commit or stash them' : 'move or remove the untracked files and commit or stash the changes';
  const unchanged = where.unchanged ? `; this merge changed nothing in ${where.unchanged}` : '';
  return new MaestroError('DIRTY_MAIN', `the main checkout ${where.repoPath} has ${what} that merging ${where.branch} would overwrite${unchanged}: ${fix}`, {
    details: { repoPath: where.repoPath, branch: where.branch, untracked: files.untracked, changed: files.changed },
  });
}

/** Every ref matching `patterns` (a prefix such as `refs/heads/`, or full names) with the commit it points at, in one git process. */
export async function refTips(repoPath: string, ...patterns: string[]): Promise<Map<string, string>> {
  const { stdout } = await git(repoPath, ['for-each-ref', '--format=%(objectname) %(refname)', '--end-of-options', ...patterns]);
  const tips = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) tips.set(line.slice(at + 1), line.slice(0, at));
  }
  return tips;
}

/**
 * The commits `refs` (full names) point at, those that exist: read from git's files when they settle every one
 * (onDisk.readRef: `repoPath`'s `.git` is a folder, not reftable), else with one for-each-ref.
 */
export async function tipsOf(repoPath: string, refs: string[]): Promise<Map<string, string>> {
  const gitDir = join(repoPath, '.git');
  const tips = new Map<string, string>();
  for (const ref of refs) {
    const tip = readRef(gitDir, ref);
    if (tip === undefined) return refTips(repoPath, ...refs);
    if (tip) tips.set(ref, tip);
  }
  return tips;
}

/** Whether `commit` is in `of`'s history (`of` itself included). */
export async function isAncestor(repoPath: string, commit: string, of: string): Promise<boolean> {
  return (await git(repoPath, ['merge-base', '--is-ancestor', commit, of], { okCodes: [1] })).code === 0;
}

/** Which of `refs` (full names) `base` already contains, in one git process. */
export async function refsMergedInto(repoPath: string, base: string, refs: string[]): Promise<Set<string>> {
  if (!refs.length) return new Set();
  const { stdout } = await git(repoPath, ['for-each-ref', `--merged=${base}`, '--format=%(refname)', '--end-of-options', ...refs]);
  return new Set(stdout.split('\n').filter(Boolean));
}

/**
 * The commit of `base`'s first-parent history that merged `commit` into it: the newest with `commit` as a later parent
 * (a merge commit), or null when none does (a fast-forward: `commit` is on that line itself, or not there at all). Only
 * the history since `commit` is read (`^commit`): what merged it came after it.
 */
export async function mergeCommitOf(repoPath: string, base: string, commit: string): Promise<string | null> {
  const { stdout } = await git(repoPath, ['rev-list', '--first-parent', '--parents', '--end-of-options', base, `^${commit}`]);
  for (const line of stdout.split('\n')) {
    const [sha, , ...later] = line.split(' ');
    if (sha && later.includes(commit)) return sha;
  }
  return null;
}

/**
 * Conflict pipeline only: starts a real merge of `base` into the worktree and lists the conflicted files. A worktree
 * whose index is locked (a git at work there) is REPO_LOCKED: nothing merged, and no agent asked to resolve nothing.
 */
export async function startMerge(worktree: string, base: string): Promise<{ clean: boolean; conflictedFiles: string[] }> {
  const merge = await git(worktree, ['merge', '--no-ff', '--no-commit', '--end-of-options', base], { okCodes: [1], env: { LC_ALL: 'C' } });
  const { code } = merge;
  // Exit 1 for an index git could not write (its lock taken) is no conflict: the agent would be asked to resolve none.
  if (code === 1 && indexNotWritten(merge.stdout + merge.stderr)) {
    throw await unwrittenIndex({ what: 'the worktree', checkout: worktree, unchanged: `nothing of ${base} was merged into it` }, merge.stdout + merge.stderr);
  }
  const conflictedFiles = await unmergedFiles(worktree);
  return { clean: code === 0 && conflictedFiles.length === 0, conflictedFiles };
}

/**
 * The paths a merge left in conflict in `checkout` (none when no merge is under way). -z: names as they are on disk;
 * quoted ("\303\274.txt"), the check for markers left found no such file and let them through.
 */
async function unmergedFiles(checkout: string): Promise<string[]> {
  const { stdout } = await git(checkout, ['diff', '--name-only', '-z', '--diff-filter=U']);
  return stdout.split('\0').filter(Boolean);
}

/** True while a merge started by startMerge is unfinished. */
export async function mergeInProgress(worktree: string): Promise<boolean> {
  const { code } = await git(worktree, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { okCodes: [1] });
  return code === 0;
}

/**
 * Stages everything and commits; returns the new HEAD, or null when there was nothing to commit. The commit is
 * tried straight away: git answers "nothing to commit" (exit 1) when nothing is staged and no merge is under way
 * (a conflict run that took main's side everywhere still commits its merge). Without auto-maintenance, which
 * would be a process per commit: the daemon runs it at its own pace (maintenance.ts).
 */
export async function commitAll(worktree: string, message: string): Promise<string | null> {
  await git(worktree, ['add', '-A']);
  const { code, stdout, stderr } = await git(worktree, [...NO_AUTO_MAINTENANCE, 'commit', '--no-verify', '-m', message], { okCodes: [1] });
  if (code === 0) return headSha(worktree);
  // Exit 1 with something to commit is a refusal, not "nothing to commit" (a prepare-commit-msg hook was one, before
  // Maestro's git ran no hooks: inertConfig.ts).
  const staged = (await git(worktree, ['diff', '--cached', '--quiet'], { okCodes: [1] })).code === 1;
  if (!staged && !(await mergeInProgress(worktree))) return null;
  const said = (stderr.trim() || stdout.trim()).split('\n').slice(-3).join(' ');
  throw new MaestroError('GIT_FAILED', `git commit failed in ${worktree} (exit 1) with changes staged: ${said}`, { details: { cwd: worktree, code } });
}

/**
 * A merge check's chain (executor/pipelines/mergeChain.ts): `commit` merged onto the worktree's HEAD as the train
 * merges a car (a merge commit, HEAD its first parent, `message`); the new HEAD, or null when it conflicts (the merge
 * is aborted, HEAD as it was), the commit is not in the repository, or HEAD holds it already (no commit made).
 */
export async function mergeCommitOnto(worktree: string, commit: string, message: string): Promise<string | null> {
  if ((await git(worktree, ['cat-file', '-e', `${commit}^{commit}`], { okCodes: [1, 128] })).code !== 0) return null;
  const before = await headSha(worktree);
  const merge = [...NO_AUTO_MAINTENANCE, 'merge', '--no-ff', '--no-verify', '-m', message, '--end-of-options', commit];
  const { code } = await git(worktree, merge, { okCodes: [1, 2], env: { LC_ALL: 'C' } });
  if (code !== 0) {
    await git(worktree, ['merge', '--abort'], { okCodes: [128] });
    return null;
  }
  const after = await headSha(worktree);
  return after === before ? null : after;
}
