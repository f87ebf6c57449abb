/**
 * Lines added to a repository's own `.git/info/exclude`: git's place for what one machine ignores. It is not
 * committed and changes no tracked file, and it covers every worktree of the repository; so Maestro uses it for
 * what it writes into a person's repository that should never reach a commit by `git add -A` (its index and locks,
 * knowledge/index/machineState.ts; the observer's session bundles, observer/bundle/gitExclude.ts).
 */
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** A folder name written into a pattern as it is: none of git's pattern characters, spaces, or line breaks. */
const PLAIN_PART = /^[A-Za-z0-9._-]+$/;

/**
 * Adds the `lines` (patterns relative to `dir`, anchored there) that `info/exclude` lacks, under `header` the first
 * time. Only in a repository's own checkout (a `.git` folder at its top): a linked worktree's `.git` file is the
 * agent's to edit and could name any folder, and the repository's exclude covers its worktrees. Never through a
 * link (the `info` folder or the file), and nothing is said when it cannot be written: the lines only keep
 * `git status` quiet. `dir` need not exist yet. Returns the lines added (anchored), none when nothing was written.
 */
export function addToGitExclude(dir: string, lines: readonly string[], header: string): string[] {
  const at = resolve(dir);
  const top = checkoutTop(at);
  if (!top) return [];
  const info = join(top, '.git', 'info');
  const file = join(info, 'exclude');
  const parts = relative(top, at).split(sep).filter(Boolean);
  // A folder named "pkg\n*\n#" would have added a line `*`, hiding every untracked file: such a folder gets none.
  if (!parts.every((p) => PLAIN_PART.test(p) && p !== '.' && p !== '..')) return [];
  const anchored = lines.map((l) => `/${parts.map((p) => `${p}/`).join('')}${l}`);
  try {
    if (!existsSync(info)) mkdirSync(info);
    else if (!lstatSync(info).isDirectory()) return [];
    // Read only a plain file: a link is not written through anyway, and a FIFO would hold the reader for good.
    const kind = lstatSync(file, { throwIfNoEntry: false });
    if (kind && !kind.isFile()) return [];
    const present = kind ? readFileSync(file, 'utf8') : '';
    const have = new Set(present.split('\n').map((l) => l.trim()));
    const missing = anchored.filter((l) => !have.has(l));
    if (!missing.length) return [];
    const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
    try {
      const lead = present && !present.endsWith('\n') ? '\n' : '';
      writeSync(fd, `${lead}${have.has(header) ? '' : `${header}\n`}${missing.join('\n')}\n`);
    } finally {
      closeSync(fd);
    }
    return missing;
  } catch {
    // a read-only repository, a link in the way: git status lists the files, nothing worse
    return [];
  }
}

/** The folder holding `.git` as a folder, from `dir` up; null when the first `.git` met is a file (a worktree, a submodule) or none is. */
function checkoutTop(dir: string): string | null {
  for (let at = dir; ; at = dirname(at)) {
    const git = join(at, '.git');
    if (existsSync(git)) return lstatSync(git).isDirectory() ? at : null;
    if (dirname(at) === at) return null;
  }
}
