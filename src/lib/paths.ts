/** Paths compared as the file system sees them. */
import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Whether `path` is itself a symbolic link (false when it does not exist). */
export function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The path with symlinks resolved (as given, absolute, when it does not exist). */
export function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    return abs; // a folder that does not exist matches no other either
  }
}

/** Whether folder `outer` is `inner` or one of its parents (symlinks resolved). */
export function holds(outer: string, inner: string): boolean {
  const [o, i] = [canonical(outer), canonical(inner)];
  return i === o || i.startsWith(o.endsWith(sep) ? o : o + sep);
}

/**
 * Where a write to `path` lands: the real path of its nearest part that exists (links resolved), with the rest as
 * written; or, when that part is a link leading nowhere, that link (where the write would land is unknown).
 */
export function landing(path: string): { real: string } | { dangling: string } {
  const abs = resolve(path);
  let existing = abs;
  while (!lstatSync(existing, { throwIfNoEntry: false }) && dirname(existing) !== existing) existing = dirname(existing);
  try {
    return { real: join(realpathSync(existing), relative(existing, abs)) };
  } catch {
    return { dangling: existing }; // its ancestors exist, so it is itself a link to nothing
  }
}
