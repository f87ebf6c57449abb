/** Paths compared as the file system sees them. */
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';

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
