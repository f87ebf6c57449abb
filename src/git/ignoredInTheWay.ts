/**
 * Git-ignored files in the way of a merge into a person's checkout. git merge takes ignored files for
 * expendable: where the merged tree puts a path of its own, an ignored file there is overwritten, an ignored
 * folder deleted with all it holds, and nothing is said (untracked files that are not ignored make it refuse,
 * which merge.ts turns into DIRTY_MAIN). A task that stopped ignoring `secret.env` and added its own replaced the
 * person's; one that committed `.workflow/sessions` as a link deleted Maestro's knowledge sessions. `git merge
 * --no-overwrite-ignore` refuses only a fast-forward: the ort strategy's checkout does not heed it (git 2.39,
 * merge-ort.c "FIXME: !opts->overwrite_ignore"). So before a train merges, what each car's branch puts where the
 * checkout's HEAD has nothing is looked up among the checkout's ignored files: the path itself (a file, or a
 * folder the branch's file or link takes the place of) and the folders above it (an ignored file where the branch
 * needs a folder).
 *
 * Cost, for a whole train: one diff-tree (every car's added paths, through stdin) and an lstat of each added
 * path and the folders above it; most trains stop there, nothing standing where they add. Only when something
 * does, one ls-files limited to those paths (Maestro's own ignored state, the sessions and the search index, is
 * never listed then: no ordinary change adds a path there); and only when ignored files are found, one diff per
 * car they concern, from the merge base: a path main stopped tracking (and now ignores) that the branch still has
 * unchanged is not one the merge writes. On Maestro's own repository (23,833 ignored files under node_modules,
 * a loaded 2-core machine), an ls-files limited to 10 paths took 12-16 ms of CPU, what `git rev-parse HEAD` takes
 * (starting the process is most of it); `git status --ignored`, which lists them all, 80-100 ms.
 */
import { lstatSync } from 'node:fs';
import { MaestroError } from '../core/errors.js';
import { pathPrefixes } from '../core/watchedPaths.js';
import { git } from './git.js';
import { gitName, pathspecOf, shownName } from './gitNames.js';

/** Something ignored where a merge puts its own: `path` as the person reads it; `files` the ignored files there (a folder's count). */
export interface IgnoredInTheWay {
  path: string;
  files: number;
  folder: boolean;
}

/**
 * Maestro's own state under `.workflow/` (knowledge/index/machineState.ts, knowledge/lifecycle/bridge.ts): its
 * knowledge sessions, search index and the audit's backups; `.workflow` itself when a file or a link takes its place.
 * A change that replaces them is no task's to make, and moving them aside loses what Maestro keeps there.
 */
const isMaestroState = (path: string): boolean => path === '.workflow' || ['.workflow/sessions', '.workflow/.trash'].some((m) => path === m || path.startsWith(`${m}/`)) || path.startsWith('.workflow/.maestro-index.db');

/** Past this many paths, ls-files is given their top folders instead (an argument list has its limits). */
const MAX_PATHSPECS = 2000;

/**
 * For each of `tips` (commits, full hex) that a merge into the checkout at `head` (a full hex) would write over
 * ignored files, what is in the way; a tip with nothing in its way is absent.
 */
export async function ignoredInTheWay(repo: string, head: string, tips: readonly string[]): Promise<Map<string, IgnoredInTheWay[]>> {
  const found = new Map<string, IgnoredInTheWay[]>();
  const added = await addedPaths(repo, head, tips);
  const all = new Set([...added.values()].flat());
  if (!all.size) return found;
  const { present, above } = lookAt(repo, all);
  if (!present.size && !above.size) return found;
  const hits = await ignoredAt(repo, present, above);
  if (!hits.size) return found;
  for (const tip of new Set(tips)) {
    const mine = (added.get(tip) ?? []).filter((p) => hits.has(p));
    if (!mine.length) continue;
    const written = await changedSinceBase(repo, head, tip, mine);
    const entries = new Map<string, IgnoredInTheWay>();
    for (const p of mine.filter((m) => written.has(m))) {
      const hit = hits.get(p)!;
      entries.set(hit.at, { path: shownName(hit.at), files: hit.files, folder: hit.folder });
    }
    if (entries.size) found.set(tip, [...entries.values()]);
  }
  return found;
}

/** Each tip's paths that `head` lacks (as bytes, one char each), in one diff-tree: a line `<tip> <head>` diffs head → tip. */
async function addedPaths(repo: string, head: string, tips: readonly string[]): Promise<Map<string, string[]>> {
  const added = new Map<string, string[]>();
  if (!tips.length) return added;
  const input = tips.map((t) => `${t} ${head}\n`).join('');
  // --always: a header for every line, even one that adds nothing, so each name is told whose it is.
  const { stdout } = await git(repo, ['diff-tree', '--stdin', '--always', '-r', '-z', '--name-only', '--no-renames', '--diff-filter=A'], { input, encoding: 'latin1' });
  let at = -1;
  for (const field of stdout.split('\0')) {
    if (!field) continue;
    if (at + 1 < tips.length && field === tips[at + 1]) {
      at++;
      if (!added.has(tips[at]!)) added.set(tips[at]!, []);
    } else if (at >= 0) added.get(tips[at]!)!.push(field);
  }
  return added;
}

/** What stands at a repository path on disk (lstat, remembered): nothing, a folder, or something else (a file, a link). */
function onDisk(repo: string): (path: string) => 'none' | 'folder' | 'other' {
  const kinds = new Map<string, 'none' | 'folder' | 'other'>();
  return (path) => {
    let kind = kinds.get(path);
    if (!kind) {
      let st;
      try {
        st = lstatSync(Buffer.concat([Buffer.from(`${repo}/`), Buffer.from(path, 'latin1')]), { throwIfNoEntry: false });
      } catch {
        st = undefined; // ENOTDIR: a file above it, found on its own
      }
      kind = !st ? 'none' : st.isDirectory() ? 'folder' : 'other';
      kinds.set(path, kind);
    }
    return kind;
  };
}

/**
 * Where ls-files must look: the added paths something stands at on disk, and the folders above them that are no
 * folder (a file or a link stands there: for each, the added paths below it). Each folder is looked at once, from
 * the top down, and no deeper than the first that is not one.
 */
function lookAt(repo: string, paths: Set<string>): { present: Set<string>; above: Map<string, string[]> } {
  const kindOf = onDisk(repo);
  const present = new Set<string>();
  const above = new Map<string, string[]>();
  for (const path of paths) {
    let blocked = false;
    for (const folder of pathPrefixes(path).slice(0, -1)) {
      const kind = kindOf(folder);
      if (kind === 'folder') continue;
      if (kind === 'other') above.set(folder, [...(above.get(folder) ?? []), path]);
      blocked = true;
      break;
    }
    if (!blocked && kindOf(path) !== 'none') present.add(path);
  }
  return { present, above };
}

/** For each added path with ignored files in its way: where they are (the path, or a file above it) and how many. */
async function ignoredAt(repo: string, added: Set<string>, above: Map<string, string[]>): Promise<Map<string, { at: string; files: number; folder: boolean }>> {
  const wanted = [...added, ...above.keys()];
  const specs = wanted.length <= MAX_PATHSPECS ? wanted : [...new Set(wanted.map((p) => p.split('/')[0]!))];
  const { stdout } = await git(repo, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--', ...specs.map((p) => pathspecOf(gitName(Buffer.from(p, 'latin1')), '').spec)], { encoding: 'latin1' });
  const hits = new Map<string, { at: string; files: number; folder: boolean }>();
  const hit = (path: string, at: string, folder: boolean) => {
    const was = hits.get(path);
    hits.set(path, { at, files: (was?.files ?? 0) + 1, folder });
  };
  for (const file of stdout.split('\0')) {
    if (!file) continue;
    // The added path itself, or a folder the branch puts a file or a link in the place of.
    const under = pathPrefixes(file).find((p) => added.has(p));
    if (under !== undefined) hit(under, under, under !== file);
    for (const path of above.get(file) ?? []) hit(path, file, false);
  }
  return hits;
}

/** Which of `paths` the branch at `tip` changed since its merge base with `head`: the ones a merge writes. */
async function changedSinceBase(repo: string, head: string, tip: string, paths: string[]): Promise<Set<string>> {
  const specs = paths.map((p) => pathspecOf(gitName(Buffer.from(p, 'latin1')), '').spec);
  const { stdout } = await git(repo, ['diff', '--name-only', '-z', '--no-renames', `${head}...${tip}`, '--', ...specs], { encoding: 'latin1' });
  return new Set(stdout.split('\0').filter(Boolean));
}

/**
 * What a merge of `branch` would write over, said as DIRTY_MAIN's message: the first 10 (a folder with how many
 * files it holds), what git would do, and what to do; `unchanged`: the base branch, when the merge was tried.
 * Maestro's own state (`.workflow/sessions`…) is named as such: the way out there is the task, not moving it.
 */
export function ignoredInTheWayError(where: { repoPath: string; branch: string; unchanged?: string }, entries: IgnoredInTheWay[]): MaestroError {
  const shown = entries.slice(0, 10).map((e) => (e.folder ? `${e.path}/ (a folder of ${e.files} file${e.files === 1 ? '' : 's'})` : e.path));
  const more = entries.length > 10 ? ` and ${entries.length - 10} more` : '';
  const own = entries.filter((e) => isMaestroState(e.path)).map((e) => e.path);
  const unchanged = where.unchanged ? `; this merge changed nothing in ${where.unchanged}` : '';
  const fix = own.length
    ? `. ${own.join(', ')} ${own.length === 1 ? 'is' : 'are'} Maestro's own state on this machine (its knowledge sessions with their pending candidates, its search index): a task has no business replacing ${own.length === 1 ? 'it' : 'them'}, so cancel the task; if you mean it, move them aside`
    : ': move them aside';
  return new MaestroError('DIRTY_MAIN', `the main checkout ${where.repoPath} has git-ignored files where merging ${where.branch} puts its own (${shown.join(', ')}${more}): git would overwrite or delete them without asking${unchanged}${fix}`, {
    details: { repoPath: where.repoPath, branch: where.branch, ignored: entries.map((e) => e.path) },
  });
}
