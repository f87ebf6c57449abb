/**
 * The observer's session bundles (`wiki/sessions/`: each session's prompts, answers, commands and file names) stay
 * out of the repository's commits by default. GUI-Anything, whose layout this is, keeps the whole `/wiki/` in its
 * own .gitignore ("runtime-generated; contains local paths & session transcripts") and writes no ignore rule into
 * a person's repository; so a `git add -A` there took every prompt along. The sessions folder is added to the
 * repository's own `.git/info/exclude` (lib/gitExclude.ts: not committed, changes no tracked file) when the observer
 * opens a session and by `maestro init`. Curated entries (`wiki/knowledge/`) stay in git status: they are what
 * `maestro search` reads and a team may share. A person who means to commit a session can `git add -f` it.
 */
import { addToGitExclude } from '../../lib/gitExclude.js';

const HEADER = '# Maestro: the observer\'s session bundles hold your prompts and the answers (added by Maestro; git add -f to share one)';

/** Adds `<wikiRoot>/sessions/` to the exclude of the repository holding the wiki, if any; returns the lines added. */
export function excludeSessionBundles(wikiRoot: string): string[] {
  return addToGitExclude(wikiRoot, ['sessions/'], HEADER);
}
