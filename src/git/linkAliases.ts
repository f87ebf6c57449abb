/**
 * Watched paths (core/watchedPaths.ts) as a commit's tree reaches them through its symbolic links. With `.github`
 * a link to `ci/gh` on main, a change to `ci/gh/workflows/ci.yml` is a change to what GitHub runs as
 * `.github/workflows/ci.yml`, and a diff over `.github/workflows` does not list it (a trial). So the gate and the
 * merge ask git for the links on the way to each watched path, and watch where they lead as well.
 *
 * Links below a watched folder count as well: with `.maestro/hooks.mjs` a link to `scripts/hooks.mjs`, an edit of
 * the script is an edit of the hook the daemon runs. Read from the tree (`git ls-tree -r`, link targets in one
 * `cat-file`), not the disk: it is the change's commit that is judged. A link whose target leaves the repository
 * (absolute, or above its root) leads nowhere a change here can edit, and is not followed. Chains of links are
 * followed up to MAX_HOPS.
 */
import { isUtf8 } from 'node:buffer';
import { posix } from 'node:path';
import { pathPrefixes as prefixes, type WatchedPaths } from '../core/watchedPaths.js';
import { readBlobs } from './blobs.js';
import { git } from './git.js';
import { shownName } from './gitNames.js';
import { leadsOutside, SYMLINK_MODE } from './links.js';

/** A watched path reached through a link: changes under `real` are changes to `watched`. */
export interface LinkAlias {
  /** The watched path as the tool reads it (`.github/workflows`). */
  watched: string;
  /** Where it is in the tree (`ci/gh/workflows`), as git's bytes, one char each (latin1), as a `-z` diff lists names. */
  real: string;
  /** The link it goes through (`.github`), as git's bytes. */
  link: string;
}

const MAX_HOPS = 4;

/** A path given to git as it is, not as a pattern (a link's target may hold `*` or start with `:`); null when its bytes cannot be an argument. */
export function literalPathspec(key: string): string | null {
  const bytes = Buffer.from(key, 'latin1');
  return isUtf8(bytes) && !bytes.includes(0) ? `:(literal)${bytes.toString('utf8')}` : null;
}

/** Where `link` (a path in the tree) points with `target`, and `rest` below it; null when that leaves the repository (links.ts). */
function resolveLink(link: string, target: string, rest: string): string | null {
  if (leadsOutside(link, target)) return null;
  const real = posix.normalize(posix.join(posix.dirname(link), target, rest)).replace(/\/$/, '');
  return real === '.' ? null : real;
}

/** The links of `commit`'s tree on the way to each of `paths`, and where each watched path really is through them. */
export async function linkAliases(repo: string, commit: string, paths: readonly string[]): Promise<LinkAlias[]> {
  const aliases: LinkAlias[] = [];
  let frontier = paths.map((p) => ({ watched: p, path: p, link: '' }));
  for (let hop = 0; hop < MAX_HOPS && frontier.length; hop++) {
    const specs = [...new Set(frontier.flatMap((f) => prefixes(f.path)))].map(literalPathspec).filter((s): s is string => s !== null);
    // -r: links below a watched folder too (a hook file linked to a script elsewhere), and those on the way to it.
    const { stdout } = await git(repo, ['ls-tree', '-r', '-z', commit, '--', ...specs], { encoding: 'latin1' });
    // -z: "<mode> <type> <sha>\t<path>\0" per entry.
    const links = new Map<string, string>();
    for (const entry of stdout.split('\0')) {
      const tab = entry.indexOf('\t');
      const [mode, , sha] = entry.slice(0, tab).split(' ');
      if (mode === SYMLINK_MODE && sha) links.set(entry.slice(tab + 1), sha);
    }
    if (!links.size) break;
    const targets = await readBlobs(repo, links.values());
    const targetOf = (link: string) => targets.get(links.get(link)!)?.toString('latin1');
    const next: typeof frontier = [];
    const follow = (f: (typeof frontier)[number], link: string, rest: string) => {
      const target = targetOf(link);
      const real = target === undefined ? null : resolveLink(link, target, rest);
      if (real !== null && real !== f.path) next.push({ watched: f.watched, path: real, link: f.link || link });
    };
    for (const f of frontier) {
      // The first link on the way: past it, the rest is resolved again from where it leads (the next hop).
      const onTheWay = prefixes(f.path).find((p) => links.has(p));
      if (onTheWay) follow(f, onTheWay, f.path.slice(onTheWay.length + 1));
      // Else the path is in this tree, and each link below it sends part of its content elsewhere.
      else for (const link of links.keys()) if (link.startsWith(`${f.path}/`)) follow(f, link, '');
    }
    // A link from one watched file to another (specs/latest.md → v2.md) leads nowhere new.
    frontier = next.filter((n) => !paths.some((p) => n.path === p || n.path.startsWith(`${p}/`)));
    for (const n of frontier) aliases.push({ watched: n.watched, real: n.path, link: n.link });
  }
  return aliases;
}

/** Watched paths with where the tree's links make them live: what a diff asks for, what it keeps, how each is named. */
export interface ThroughLinks extends WatchedPaths {
  /** The name as the person reads it: git's quoting when not UTF-8, and the link it is reached through. */
  shown(file: string): string;
}

/**
 * `watched` and its `aliases`: the pathspecs also take each alias's real path and the folders above it
 * (core/watchedPaths.ts says why those), as literal pathspecs; a changed name (git's bytes) is held when `watched`
 * holds it, or when it is an alias's real path, under it, or a folder above it.
 */
export function throughLinks(watched: WatchedPaths, aliases: readonly LinkAlias[]): ThroughLinks {
  const unique = [...new Map(aliases.map((a) => [a.real, a])).values()];
  const specs = new Set(unique.flatMap((a) => prefixes(a.real)).map(literalPathspec).filter((s): s is string => s !== null));
  const aliasOf = (file: string) => unique.find((a) => file === a.real || file.startsWith(`${a.real}/`) || a.real.startsWith(`${file}/`));
  return {
    paths: watched.paths,
    pathspecs: [...watched.pathspecs, ...specs],
    holds: (file) => watched.holds(file) || aliasOf(file) !== undefined,
    shown: (file) => {
      const a = aliasOf(file);
      return a ? `${shownName(file)} (through the link ${shownName(a.link)})` : shownName(file);
    },
  };
}

/** Each of `lists` through the links of `commit`'s tree, read once for all of them. */
export async function watchedThroughLinks<K extends string>(repo: string, commit: string, lists: Record<K, WatchedPaths>): Promise<Record<K, ThroughLinks>> {
  const names = Object.keys(lists) as K[];
  const aliases = await linkAliases(repo, commit, names.flatMap((k) => lists[k].paths));
  const out = {} as Record<K, ThroughLinks>;
  for (const k of names) out[k] = throughLinks(lists[k], aliases.filter((a) => lists[k].paths.includes(a.watched)));
  return out;
}
