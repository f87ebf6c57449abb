/**
 * The files of a change that run code outside Maestro once merged (core/runsElsewhere.ts): one `git diff --raw`
 * over their pathspecs and over where the tree's links make them live (git/linkAliases.ts), then, for the
 * package.json files in it, their two blobs in one `cat-file` to tell whether a command changed.
 */
import { isManifest, manifestCommandsChanged, RUNS_ELSEWHERE } from '../core/runsElsewhere.js';
import { blobSizes, readBlobs } from './blobs.js';
import { git } from './git.js';
import { watchedThroughLinks, type ThroughLinks } from './linkAliases.js';

/** A package.json is read up to this size (they are a few KB); past it, its commands count as changed. */
const MANIFEST_BYTES = 1024 * 1024;

const ZERO_SHA = /^0+$/;

/** The files changed from `base` to `head` that run code elsewhere, each shown as the diff shows it; `elsewhere` through `head`'s links when already read. */
export async function filesRunningElsewhere(repo: string, base: string, head: string, elsewhere?: ThroughLinks): Promise<string[]> {
  const via = elsewhere ?? (await watchedThroughLinks(repo, head, { elsewhere: RUNS_ELSEWHERE })).elsewhere;
  // As bytes: a name that is not UTF-8 is shown as the diff beside it shows it (git/gitNames.ts shownName).
  const { stdout } = await git(repo, ['diff', '--raw', '-z', '--no-abbrev', '--no-renames', base, head, '--', ...via.pathspecs], { encoding: 'latin1' });
  // -z --raw: ":old_mode new_mode old_sha new_sha status\0path\0" per file.
  const parts = stdout.split('\0');
  const changes: Array<{ path: string; oldSha: string; newSha: string }> = [];
  for (let i = 0; i + 1 < parts.length && parts[i]!.startsWith(':'); i += 2) {
    const [, , oldSha, newSha] = parts[i]!.split(' ');
    changes.push({ path: parts[i + 1]!, oldSha: oldSha!, newSha: newSha! });
  }
  const manifests = changes.filter((c) => !via.holds(c.path) && isManifest(c.path));
  const texts = await manifestTexts(repo, manifests.flatMap((c) => [c.oldSha, c.newSha]));
  // An absent side (all zeros) is null; a side that could not be read (too big, no blob) is '' and counts as changed.
  const text = (sha: string) => (ZERO_SHA.test(sha) ? null : (texts.get(sha) ?? ''));
  return changes.filter((c) => via.holds(c.path) || (isManifest(c.path) && manifestCommandsChanged(text(c.oldSha), text(c.newSha)))).map((c) => via.shown(c.path));
}

/** The text of each blob among `shas` up to MANIFEST_BYTES; a bigger one, or one that is no blob, is left out. */
async function manifestTexts(repo: string, shas: string[]): Promise<Map<string, string>> {
  if (!shas.length) return new Map();
  const sizes = await blobSizes(repo, shas);
  const small = [...sizes].filter(([, size]) => size <= MANIFEST_BYTES).map(([sha]) => sha);
  return new Map([...(await readBlobs(repo, small))].map(([sha, bytes]) => [sha, bytes.toString('utf8')]));
}
