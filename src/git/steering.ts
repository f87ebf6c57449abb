/**
 * The steering files a change edits (core/steering.ts), as the gate tells the person before approving and the merge
 * names them after (`project.settings_files`): one `git diff` over the steering paths and over where the tree's
 * links make them live (git/linkAliases.ts).
 */
import { isSteering, STEERING_PATHS, STEERING_PATHSPECS } from '../core/steering.js';
import { git } from './git.js';
import { linkAliases, throughLinks, type LinkAlias } from './linkAliases.js';

/** Steering files changed from `from` to `to`, each shown as the person reads it; `aliases` of `to`'s tree when already read. */
export async function changedSteering(repo: string, from: string, to: string, aliases?: LinkAlias[]): Promise<string[]> {
  const via = throughLinks(aliases ?? (await linkAliases(repo, to, STEERING_PATHS)));
  // -z and as bytes: a name past ASCII is not C-quoted (isSteering never matched those), and one that is not UTF-8 is
  // shown with git's quoting rather than U+FFFD (git/gitNames.ts shownName).
  const { stdout } = await git(repo, ['diff', '--name-only', '-z', '--no-renames', from, to, '--', ...STEERING_PATHSPECS, ...via.pathspecs], { encoding: 'latin1' });
  return stdout.split('\0').filter((file) => file && (isSteering(file) || via.aliasOf(file))).map(via.shown);
}
