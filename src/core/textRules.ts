/**
 * Rules for text from outside that need no zod: schemas.ts builds its schemas on them, and the CLI checks what a
 * person typed with them before anything is sent, without loading zod (about 0.3 s of a command's start).
 */

/** Control characters: C0 (NUL, tabs, line breaks, ESC), DEL, C1 (the 8-bit CSI, NEL) and the Unicode line and paragraph separators. */
export const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The longest path a task's ownedFiles holds. */
export const REPO_PATH_MAX = 1000;

/**
 * What is wrong with a path of a task's ownedFiles (a file, a folder ending in '/', or a glob), or null: it must name
 * something inside the repository, and no control character (a NUL or a line break is in no file name git shows;
 * `task show` printed "a\0b" as "a b").
 */
export function repoPathProblem(path: string): string | null {
  if (!path) return 'must not be empty';
  if (path.length > REPO_PATH_MAX) return `must be at most ${REPO_PATH_MAX} characters`;
  if (path.startsWith('/') || path.split(/[\\/]/).includes('..')) return 'must be a path inside the repository (relative, no "..")';
  if (CONTROL.test(path)) return 'must not contain control characters (NUL, line breaks, tabs)';
  return null;
}
