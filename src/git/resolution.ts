/**
 * What a conflict run may change: the files in conflict, nothing else. A merge that stopped on conflicts has
 * staged every other path as git merged it by itself (stage 0 in the index); the agent's resolution, once staged,
 * must leave each of those as it was and add nothing beside them. Otherwise an approved task's merge carried into
 * main, as a "resolution", changes no one had looked at (trial 3: a line appended to run.sh, a file in no conflict,
 * merged after the AI review with the person's earlier approval standing).
 */
import { git } from './git.js';

/** The index's entries at stage 0, path → "mode object": a conflicted path's stages 1–3 are left out. */
export type StagedEntries = ReadonlyMap<string, string>;

export async function stagedEntries(worktree: string): Promise<StagedEntries> {
  const { stdout } = await git(worktree, ['ls-files', '--stage', '-z']);
  const entries = new Map<string, string>();
  // "<mode> <object> <stage>\t<path>" per entry; -z: the path as it is, never quoted.
  for (const record of stdout.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, object, stage] = record.slice(0, tab).split(' ');
    if (stage === '0') entries.set(record.slice(tab + 1), `${mode} ${object}`);
  }
  return entries;
}

/**
 * Stages everything in the worktree (as the commit would) and returns the paths besides `conflicted` whose entry
 * differs from `merged` (what git merged by itself): changed, added or removed, sorted.
 */
export async function changedBeyond(worktree: string, merged: StagedEntries, conflicted: readonly string[]): Promise<string[]> {
  await git(worktree, ['add', '-A']);
  const now = await stagedEntries(worktree);
  const allowed = new Set(conflicted);
  return [...new Set([...merged.keys(), ...now.keys()])].filter((p) => !allowed.has(p) && merged.get(p) !== now.get(p)).sort();
}
