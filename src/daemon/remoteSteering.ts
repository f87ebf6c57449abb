/**
 * Changes to what steers later runs (core/steering.ts: `.maestro/` hooks and checks, the knowledge briefs
 * quote) that reach a shared remote's main by another way than a Maestro merge: a teammate's direct push,
 * a merge on the forge. Each daemon runs main's hooks and checks from its clone, so from its next sync they
 * run new code; a Maestro merge that changes them is a `project.settings_files` event naming its task, and
 * these are one too, naming the commit, its author and its subject.
 *
 * Which commits are Maestro's: main's first-parent history from what this clone last had (`from`) to the
 * remote's main (`to`), walked from the newest. A recorded merge `sha` (its status event's `merged`) covers
 * the commits from itself down to the main it was merged onto (`previousSha`): one merge commit, or a
 * fast-forwarded branch's own commits. Every other commit there that touches a steering path is not.
 * A daemon checks at each sync, so it sees a pushed commit while it is still on main's first-parent line;
 * a commit that a conflict run has since merged into a task branch fast-forwarded over it is counted as
 * that task's.
 */
import { coerceError } from '../core/errors.js';
import { STEERING } from '../core/steering.js';
import type { Project } from '../core/types.js';
import { git } from '../git/git.js';
import { watchedThroughLinks, type ThroughLinks } from '../git/linkAliases.js';
import { tipsOf } from '../git/merge.js';
import { changedSteering } from '../git/steering.js';
import type { Store } from '../store/store.js';

export interface ForeignChange {
  sha: string;
  author: string;
  subject: string;
  files: string[];
}

/**
 * The move from this clone's main (`from`) to the remote's as last fetched (`to`) when it touched a steering
 * path, else null. Both are read from the ref files (no git process: a sync runs before most runs), else git is asked.
 */
export async function steeringMove(clone: string, base: string): Promise<{ from: string; to: string } | null> {
  const refs = await tipsOf(clone, [`refs/heads/${base}`, `refs/remotes/origin/${base}`]);
  const from = refs.get(`refs/heads/${base}`);
  const to = refs.get(`refs/remotes/origin/${base}`);
  if (!from || !to || from === to) return null;
  // Steering paths reached through a link of the remote's main count too (git/steering.ts, git/linkAliases.ts).
  return (await changedSteering(clone, from, to)).length ? { from, to } : null;
}

/**
 * The first-parent commits in `from..to` that touch a steering path and no recorded merge covers.
 * `merges(shas)`: of these commits, the ones a Maestro merge left main at, with the main it merged onto (null: not recorded).
 */
export async function foreignSteeringChanges(
  clone: string,
  move: { from: string; to: string },
  merges: (shas: string[]) => Promise<Map<string, string | null>>,
): Promise<ForeignChange[]> {
  const range = `${move.from}..${move.to}`;
  const via = (await watchedThroughLinks(clone, move.to, { steering: STEERING })).steering;
  // As bytes: names shown as the gate shows them (parseLog).
  const log = await git(clone, ['log', '-z', '--first-parent', '--no-renames', '--format=%x00%H%x00%an <%ae>%x00%s', '--name-only', range, '--', ...via.pathspecs], { encoding: 'latin1' });
  const touched = parseLog(log.stdout, via);
  if (!touched.length) return [];
  const chain = (await git(clone, ['rev-list', '--first-parent', range])).stdout.split('\n').filter(Boolean);
  const recorded = await merges(chain);
  const maestros = new Set<string>();
  // Inside a merge's commits until the main it merged onto; a merge recorded without it covers itself alone.
  let coveredDownTo: string | null = null;
  for (const sha of chain) {
    if (sha === coveredDownTo) coveredDownTo = null;
    if (recorded.has(sha)) {
      maestros.add(sha);
      coveredDownTo = recorded.get(sha) ?? null;
    } else if (coveredDownTo !== null) maestros.add(sha);
  }
  return touched.filter((c) => !maestros.has(c.sha));
}

/** Text git printed, read as bytes one char each (latin1), as UTF-8. */
const utf8 = (latin1: string) => Buffer.from(latin1, 'latin1').toString('utf8');

/**
 * `git log -z` with the format above: per commit "\0sha\0author\0subject\0", then "\n" and its names, each ending in
 * "\0". NUL is the one byte no name, author or subject holds, so the fields are read by position. Before, names came
 * C-quoted (`".workflow/specs/\303\274n\303\257.md"`, which the steering match never held) and records were split at \x1e,
 * which a subject may hold (git keeps it): the rest of that commit, its files with it, read as no commit.
 * The text is git's bytes one char each (latin1): the author and subject are read as UTF-8, the names as the gate
 * shows them (git/gitNames.ts shownName), so a name that is not UTF-8 is not told with U+FFFD; one reached through a
 * link of the remote's main (`via`) is kept and named with it.
 */
function parseLog(text: string, via: ThroughLinks): ForeignChange[] {
  const parts = text.split('\0');
  const out: ForeignChange[] = [];
  for (let i = 0; i + 3 < parts.length; ) {
    const [sha, author, subject] = [parts[i + 1]!, utf8(parts[i + 2]!), utf8(parts[i + 3]!)];
    // A commit's names run to the next commit's leading "\0" (an empty part: no name is empty).
    let next = i + 4;
    while (next < parts.length && parts[next] !== '') next++;
    const files = parts.slice(i + 4, next).map((n) => n.replace(/^\n/, '')).filter(via.holds).map(via.shown);
    if (files.length) out.push({ sha, author, subject, files });
    i = next;
  }
  return out;
}

/** The dedupe key of the event that records a commit Maestro put on main other than by a merge (a knowledge promotion). */
export const maestroCommitKey = (projectId: string, sha: string) => `maestro-commit:${projectId}:${sha}`;

/**
 * The lookup foreignSteeringChanges takes, from the store: the merges table names the commits Maestro left
 * main at, and each one's status event (`merged`) the main it merged onto; a promotion's commit (its event,
 * found by key) covers itself. In slices, for a long absence.
 */
export function recordedMerges(store: Store, projectId: string): (shas: string[]) => Promise<Map<string, string | null>> {
  return async (shas) => {
    const found = new Map<string, string | null>();
    for (let i = 0; i < shas.length; i += 500) {
      const slice = shas.slice(i, i + 500);
      const rows = await store.db.all<{ task_id: string; commit_sha: string }>(
        `SELECT task_id, commit_sha FROM merges WHERE project_id = $1 AND commit_sha IN (${slice.map((_, k) => `$${k + 2}`).join(', ')})`, [projectId, ...slice]);
      for (const row of rows) found.set(row.commit_sha, await previousShaOf(store, row.task_id, row.commit_sha));
      const keys = slice.map((sha) => maestroCommitKey(projectId, sha));
      const promoted = await store.db.all<{ dedupe_key: string }>(`SELECT dedupe_key FROM events WHERE dedupe_key IN (${keys.map((_, k) => `$${k + 1}`).join(', ')})`, keys);
      for (const row of promoted) found.set(row.dedupe_key.slice(row.dedupe_key.lastIndexOf(':') + 1), null);
    }
    return found;
  };
}

async function previousShaOf(store: Store, taskId: string, sha: string): Promise<string | null> {
  const { events } = await store.events.list({ taskId, type: 'task.status', limit: 1000 });
  for (const e of events) {
    const merged = e.payload.merged as { sha?: unknown; previousSha?: unknown } | undefined;
    if (merged?.sha === sha && typeof merged.previousSha === 'string') return merged.previousSha;
  }
  return null;
}

/**
 * ProjectRepos' onSteeringMoved for a daemon: after a sync moved this clone's main, each foreign change is a
 * `project.settings_files` event (`remote: true`), once however many daemons see it (dedupe key). A failure is
 * said and never fails the sync.
 */
export function steeringRecorder(store: Store, onError: (err: Error) => void): (project: Project, clone: string, move: { from: string; to: string }) => Promise<void> {
  return async (project, clone, move) => {
    try {
      for (const c of await foreignSteeringChanges(clone, move, recordedMerges(store, project.id))) {
        const payload = { files: c.files, who: c.author, from: "a commit on the shared remote's main, not a Maestro merge", subject: c.subject, sha: c.sha, remote: true };
        await store.events.appendOnce({ projectId: project.id, type: 'project.settings_files', payload }, `remote-steering:${project.id}:${c.sha}`);
      }
    } catch (err) {
      onError(coerceError(err));
    }
  };
}
