/**
 * The steering files a change edits (core/steering.ts), as the gate tells the person before approving and the merge
 * names them after (`project.settings_files`): one `git diff` over the steering paths and over where the tree's
 * links make them live (git/linkAliases.ts).
 */
import { STEERING } from '../core/steering.js';
import { git } from './git.js';
import { watchedThroughLinks, type ThroughLinks } from './linkAliases.js';

/** Steering files changed from `from` to `to`, each shown as the person reads it; `steering` through `to`'s links when already read. */
export async function changedSteering(repo: string, from: string, to: string, steering?: ThroughLinks): Promise<string[]> {
  const via = steering ?? (await watchedThroughLinks(repo, to, { steering: STEERING })).steering;
  // -z and as bytes: a name past ASCII is not C-quoted (the match never held those), and one that is not UTF-8 is
  // shown with git's quoting rather than U+FFFD (git/gitNames.ts shownName).
  const { stdout } = await git(repo, ['diff', '--name-only', '-z', '--no-renames', from, to, '--', ...via.pathspecs], { encoding: 'latin1' });
  return stdout.split('\0').filter((file) => file && via.holds(file)).map(via.shown);
}
