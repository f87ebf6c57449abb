/**
 * Promotion on a project on a shared remote. Its knowledge files are main's, and each daemon works in a
 * clone its next sync resets to the remote's main: a promotion written only in the clone would vanish. So
 * it is made as a merge is, under the project's merge lease and with the clone to itself: main synced
 * from the remote, the promotion written, the changed knowledge files committed and pushed. A push the
 * remote refuses undoes it all: main goes back to the remote's, and the session's receipts (which say
 * what was promoted) are put back as they were, so the candidates stay pending and a retry promotes them.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { coerceError, MaestroError } from '../core/errors.js';
import { taskIdOfSession } from '../core/supersededVersion.js';
import type { Project } from '../core/types.js';
import { writeFileAtomic } from '../lib/atomicWrite.js';
import { linkOutOfRepo } from '../lib/repoWrites.js';
import { git } from '../git/git.js';
import { releaseMergeLease, takeMergeLease } from '../store/ops/daemons.js';
import type { Store } from '../store/store.js';
import { maestroCommitKey } from './remoteSteering.js';
import { baseBranchOf, type ProjectRepos } from './repos.js';

export interface SharedKnowledgeDeps {
  store: Store;
  repos: ProjectRepos;
  owner: string;
  leaseMs: number;
  /** A promotion that landed but whose event could not be written (it is said, the promotion stands). */
  onError?: (err: Error) => void;
}

/** Runs `promote` in the project's clone (given its path) and lands what it wrote on the remote's main; see the file's comment. */
export async function promoteOnRemote<T extends Promoted>(deps: SharedKnowledgeDeps, project: Project, sessionId: string, promote: (clone: string) => T | Promise<T>): Promise<T> {
  const { store, repos, owner, leaseMs } = deps;
  return repos.exclusive(project.id, async () => {
    if (!(await takeMergeLease(store.db, { projectId: project.id, owner, now: store.clock(), leaseMs }))) {
      throw new MaestroError('TASK_BUSY', `Another daemon is merging into ${baseBranchOf(project)} of project ${project.name}; nothing was promoted. Promote again in a moment.`, { details: { projectId: project.id } });
    }
    try {
      const clone = await repos.sync(project);
      const receipts = snapshot(clone, join(clone, '.workflow', 'sessions', sessionId));
      try {
        // Inside: a promotion that fails halfway (a lock timeout, a full disk) is undone like a refused push.
        const result = await promote(clone);
        const changed = await knowledgeChanges(clone);
        if (!changed.length) return result;
        await git(clone, ['add', '--', ...changed]);
        await git(clone, ['commit', '-q', '--no-verify', '-m', await promotionMessage(store, sessionId, result), '--', ...changed]);
        await repos.pushMain(project, clone);
        // On the remote now: nothing after this may undo it.
        await recordPromotionCommit(store, project, clone, sessionId, changed).catch((err) => deps.onError?.(coerceError(err)));
        return result;
      } catch (err) {
        await undo(clone, baseBranchOf(project));
        receipts.restore();
        throw err instanceof MaestroError
          ? new MaestroError(err.code, `Nothing was promoted: ${err.message}`, { cause: err, details: err.details })
          : err;
      }
    } finally {
      await releaseMergeLease(store.db, project.id, owner);
    }
  });
}

/**
 * The promotion's commit, now on the remote's main, as a `project.settings_files` event: what briefs quote
 * changed, and the other daemons' syncs know the commit for Maestro's (remoteSteering.ts), not a foreign push.
 */
async function recordPromotionCommit(store: Store, project: Project, clone: string, sessionId: string, files: string[]): Promise<void> {
  const sha = (await git(clone, ['rev-parse', 'HEAD'])).stdout.trim();
  const payload = { files, who: `a knowledge promotion from session ${sessionId}`, from: 'the knowledge review', sha, promotion: true };
  await store.events.appendOnce({ projectId: project.id, type: 'project.settings_files', payload }, maestroCommitKey(project.id, sha));
}

/** Main back to the remote's, and the knowledge files a promotion made and did not commit gone. */
async function undo(clone: string, base: string): Promise<void> {
  await git(clone, ['reset', '-q', '--hard', `origin/${base}`]);
  await git(clone, ['clean', '-q', '-f', '--', ...KNOWLEDGE_FILES]);
}

/** What a promotion's commit message names: the entries it wrote. */
export interface Promoted {
  promoted: ReadonlyArray<{ promoted_id: string }>;
}

/**
 * A promotion commit's message: the task whose session it came from (its title and id; any other session by its
 * id) and the entries written, e.g. `Knowledge promoted from task "Add greet" (t_…): S-20261207-…, K-20261207-…`.
 */
export async function promotionMessage(store: Store, sessionId: string, result: Promoted): Promise<string> {
  const taskId = taskIdOfSession(sessionId);
  const task = taskId ? await store.tasks.row(taskId).catch(() => null) : null;
  return promotionSubject(task ? `task "${subjectLine(task.title)}" (${task.id})` : `session ${sessionId}`, result);
}

/** The message's text once its source is named (`from`): what the CLI writes too, where no store names the task. */
export function promotionSubject(from: string, result: Promoted): string {
  const ids = result.promoted.map((p) => p.promoted_id);
  return `Knowledge promoted from ${from}${ids.length ? `: ${ids.join(', ')}` : ''}`;
}

/** A commit subject's part: whitespace made one space, at most 72 characters. */
function subjectLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 72 ? `${line.slice(0, 71)}…` : line;
}

/** The project's spec and knowhow files, as git pathspecs. */
const KNOWLEDGE_FILES = [':(glob).workflow/specs/*.md', ':(glob).workflow/knowhow/**/*.md'];

/**
 * The knowledge files a promotion changed in the clone: the project's spec and knowhow files. Never its
 * sessions (receipts and ledgers stay this host's), its search index or its lock and temporary files.
 */
export async function knowledgeChanges(clone: string): Promise<string[]> {
  const { stdout } = await git(clone, ['status', '--porcelain', '-z', '--untracked-files=all', '--', ...KNOWLEDGE_FILES]);
  return stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.slice(3));
}

/** The knowledge-*.json files (ledgers, receipts, promotion records) a promotion may write under a session. */
const RECEIPT = /^knowledge-.*\.json$/;

function receiptFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  // Through the run folders, which are links to the runs' own folders (their transcripts are not read); no other link.
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory() || (e.isSymbolicLink() && basename(dir) === 'runs' && isFolder(path))) return receiptFiles(path);
    return e.isFile() && RECEIPT.test(e.name) ? [path] : [];
  });
}

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/**
 * The session's receipts as they are now, to put back after a promotion that did not land: what it added is removed,
 * and what it changed is written back; a receipt it left alone is not touched. A session folder that a link the
 * repository holds sends out of the clone (`.workflow -> /elsewhere`) is not read at all: the promotion refuses it
 * (lib/repoWrites.ts) and writes nothing there, so there is nothing to put back.
 */
function snapshot(clone: string, dir: string): { restore(): void } {
  if (linkOutOfRepo(clone, dir)) return { restore: () => undefined };
  const files = new Map(receiptFiles(dir).map((path) => [path, readFileSync(path)] as const));
  return {
    restore() {
      for (const path of receiptFiles(dir)) if (!files.has(path)) rmSync(path, { force: true });
      for (const [path, bytes] of files) if (!sameBytes(path, bytes)) writeFileAtomic(path, bytes);
    },
  };
}

function sameBytes(path: string, bytes: Buffer): boolean {
  try {
    return readFileSync(path).equals(bytes);
  } catch {
    return false; // removed: written back
  }
}
