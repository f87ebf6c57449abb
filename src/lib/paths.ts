/** Paths compared as the file system sees them. */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

/** The path with symlinks resolved (as given, absolute, when it does not exist). */
export function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    return abs; // a folder that does not exist matches no other either
  }
}
