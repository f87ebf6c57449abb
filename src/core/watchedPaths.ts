/**
 * A set of repository paths a change is looked at for (core/steering.ts, core/runsElsewhere.ts): each a file, or a
 * folder and everything under it; and the folders above them (`.workflow` above `.workflow/knowhow`), since a change
 * that makes one of those a symlink (or a file, or a submodule) moves every path under it: `.workflow` linked to
 * `docs/wf` made `docs/wf/knowhow/*.md` the project's knowhow, and none of the paths was in the change.
 */
export interface WatchedPaths {
  /** The paths themselves. */
  paths: readonly string[];
  /** Pathspecs for a git diff or log that finds every change to them; keep the names it lists that `holds`. */
  pathspecs: readonly string[];
  /** Whether a changed path is one of them, under one, or a folder above one. */
  holds(file: string): boolean;
}

/** Every path from the first component down to `path` itself: `a`, `a/b`, `a/b/c`. */
export const pathPrefixes = (path: string): string[] => path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));

export function watchedPaths(paths: readonly string[]): WatchedPaths {
  const parents = [...new Set(paths.flatMap((p) => pathPrefixes(p).slice(0, -1)))];
  return {
    paths,
    pathspecs: [...paths, ...parents],
    holds: (file) => parents.includes(file) || paths.some((p) => file === p || file.startsWith(`${p}/`)),
  };
}
