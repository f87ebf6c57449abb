/**
 * Promotion into a project's own checkout (no shared remote): the person's folder, where Maestro merges tasks.
 * A promotion writes spec and knowhow files there; left uncommitted, a changed spec file made the checkout
 * dirty and the merge of the very task being reviewed was refused ("commit or stash them before merging").
 * So the promotion commits what it wrote, as the shared-remote path does (sharedKnowledge.ts): under the
 * project's merge lease (no train merges into the checkout meanwhile), one commit naming the task and the
 * entries, holding only the knowledge files the promotion changed, never `git add -A`.
 *
 * The person's own work is never committed nor touched: a knowledge file that had uncommitted changes before
 * the promotion is left out of the commit (and said so), as is every other file, staged or not (`git commit
 * -- <paths>` commits those paths only and leaves the rest of the index as it was). A checkout on another
 * branch than the project's base gets the files written and not committed (they would land on the person's
 * branch). A commit git refuses (a lock held by the person's git) leaves the promotion standing, its files
 * written, and says why: nothing is undone in a person's checkout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import type { Project } from '../core/types.js';
import { checkoutState, git, headSha } from '../git/git.js';
import { releaseMergeLease, takeMergeLease } from '../store/ops/daemons.js';
import { baseBranchOf, remoteOf } from './repos.js';
import { knowledgeChanges, promoteOnRemote, promotionMessage, type Promoted, type SharedKnowledgeDeps } from './sharedKnowledge.js';

/** What became of a promotion's files in the checkout: committed (sha, files), or left uncommitted and why. */
export interface CheckoutCommit {
  sha: string | null;
  files: string[];
  uncommitted: string[];
  why: string | null;
}

export type CheckoutKnowledgeDeps = Pick<SharedKnowledgeDeps, 'store' | 'owner' | 'leaseMs'>;

/** A promotion committed where the project's knowledge lives: on a shared remote pushed to its main, else in its checkout. */
export function promoteCommitted<T extends Promoted>(deps: SharedKnowledgeDeps, project: Project, sessionId: string, promote: (repo: string) => T | Promise<T>): Promise<T & { commit?: CheckoutCommit }> {
  return remoteOf(project) ? promoteOnRemote(deps, project, sessionId, promote) : promoteInCheckout(deps, project, sessionId, promote);
}

/** Runs `promote` in the project's checkout and commits the knowledge files it changed; see the file's comment. */
export async function promoteInCheckout<T extends Promoted>(deps: CheckoutKnowledgeDeps, project: Project, sessionId: string, promote: (repo: string) => T | Promise<T>): Promise<T & { commit: CheckoutCommit }> {
  const { store, owner, leaseMs } = deps;
  const repo = project.repoPath;
  if (!(await takeMergeLease(store.db, { projectId: project.id, owner, now: store.clock(), leaseMs }))) {
    throw new MaestroError('TASK_BUSY', `A merge into ${baseBranchOf(project)} of project ${project.name} is under way; nothing was promoted. Promote again in a moment.`, { details: { projectId: project.id } });
  }
  try {
    return await promoteAndCommit(repo, baseBranchOf(project), (result) => promotionMessage(store, sessionId, result), promote);
  } finally {
    await releaseMergeLease(store.db, project.id, owner);
  }
}

/**
 * Runs `promote` in `repo` and commits, on `base` only, the knowledge files it changed that the person was not
 * editing: the rules of the file's comment, without the merge lease (the caller holds it, or no daemon merges there).
 */
export async function promoteAndCommit<T extends Promoted>(repo: string, base: string, message: (result: T) => Promise<string>, promote: (repo: string) => T | Promise<T>): Promise<T & { commit: CheckoutCommit }> {
  const before = await personsEdits(repo);
  const result = await promote(repo);
  const changed = (await knowledgeChanges(repo)).sort();
  // A file the person was editing: in the commit it would carry their edits too.
  const theirs = changed.filter((f) => before.has(f));
  const ours = changed.filter((f) => !before.has(f));
  const touched = theirs.filter((f) => !sameBytes(join(repo, f), before.get(f)!));
  const commit = await commitOurs(repo, base, () => message(result), ours);
  const uncommitted = [...(commit.sha ? [] : ours), ...touched];
  const why = commit.why ?? (touched.length ? `they had uncommitted changes of yours before the promotion` : null);
  return { ...result, commit: { sha: commit.sha, files: commit.sha ? ours : [], uncommitted, why: uncommitted.length ? why : null } };
}

/** Commits `files` alone on the base branch; a refusal is said, not thrown (the promotion stands). */
async function commitOurs(repo: string, base: string, message: () => Promise<string>, files: string[]): Promise<{ sha: string | null; why: string | null }> {
  if (!files.length) return { sha: null, why: null };
  try {
    const { branch } = await checkoutState(repo);
    if (branch !== base) return { sha: null, why: `the checkout is on ${branch ?? 'a detached HEAD'}, not ${base}: they would be committed there` };
    await git(repo, ['add', '--', ...files]);
    // --no-verify: the person's commit hooks judge the person's commits (as the merge's, git/merge.ts).
    await git(repo, ['commit', '-q', '--no-verify', '-m', await message(), '--', ...files]);
    return { sha: await headSha(repo), why: null };
  } catch (err) {
    return { sha: null, why: `git could not commit them: ${(err as Error).message}` };
  }
}

/** The knowledge files with uncommitted changes before the promotion, with their bytes then (null: deleted). */
async function personsEdits(repo: string): Promise<Map<string, Buffer | null>> {
  const edits = new Map<string, Buffer | null>();
  for (const f of await knowledgeChanges(repo)) edits.set(f, readOrNull(join(repo, f)));
  return edits;
}

function readOrNull(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

function sameBytes(path: string, bytes: Buffer | null): boolean {
  const now = readOrNull(path);
  return now === null || bytes === null ? now === bytes : now.equals(bytes);
}
