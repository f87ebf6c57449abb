/**
 * The symlinks of a change: what each says (its target, as stored in its blob) and whether that leads out of the
 * repository. Decided from the link's own folder and the target's text alone, never by following it on disk:
 * the target may not exist where the review is read (a key on the agent's machine, a file a later change
 * makes), and what merging lands is the link's text. A link out of the repository (`../../../../root/.ssh/id_rsa`)
 * hands whatever reads the merged checkout a file that is not the project's.
 */
import { gitName } from './gitNames.js';
import { readBlobs } from './blobs.js';

/** Git's mode for a symlink. */
export const SYMLINK_MODE = '120000';

export interface LinkTarget {
  /** The target as stored: as it is when UTF-8, else as git quotes a name ("\377"). */
  target: string;
  /** Absolute, or more `..` than the folders above the link: it points outside the repository. */
  outside: boolean;
}

/**
 * Whether `target`, read from the folder of the link at `linkPath` (a repository path, `/`-separated), leaves
 * the repository: an absolute target does, and so does a relative one that climbs above the root at any point,
 * even to come back in (`../<repo's folder name>/x` depends on a name outside the repository).
 */
export function leadsOutside(linkPath: string, target: string): boolean {
  if (target.startsWith('/')) return true;
  let depth = linkPath.split('/').length - 1;
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    depth += part === '..' ? -1 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/** Each symlink's target among `links` (its path's bytes and its blob), in one `cat-file`; keyed by blob. */
export async function linkTargets(cwd: string, links: Array<{ path: Buffer; blob: string }>): Promise<Map<string, LinkTarget>> {
  const targets = new Map<string, LinkTarget>();
  if (!links.length) return targets;
  const blobs = await readBlobs(cwd, links.map((l) => l.blob));
  for (const { path, blob } of links) {
    const bytes = blobs.get(blob);
    // latin1: one char a byte, so `/` and `.` are found whatever the rest of the bytes are.
    if (bytes) targets.set(blob, { target: gitName(bytes).shown, outside: leadsOutside(path.toString('latin1'), bytes.toString('latin1')) });
  }
  return targets;
}
