/**
 * `maestro wiki redact`: rewrites each wiki file that holds a secret with the
 * secret replaced by `[redacted: <kind>]` (secrets.ts decides the spans; the
 * shapes are src/core/redact.ts'), for what was written before the observer
 * redacted as it read. Every other byte of the file is kept (frontmatter keys
 * this code does not know included) and so is its mode (bundles are 0600).
 *
 * Each file is written atomically (the one atomic write, src/lib/atomicWrite.ts):
 * the new text goes to a temporary file beside it, which is given the old file's
 * mode and renamed over it. The observer may be writing the same file (a bundle
 * it patches, an entry it updates): if the file's bytes changed between our read
 * and the rename, the temporary file is dropped and the file read again, up to 5
 * times (the bundle store's own patch does the same, FORMATS §8.3). A write that
 * lands in the instant between that last check and the rename is lost; without a
 * lock the observer honours, that instant cannot be closed (stop the observer
 * first to be sure).
 *
 * A name that holds a secret is reported, never renamed: an entry's path is
 * kept in bundles (retrieval.relativePath, write.targetPath) and its slug in
 * index.md and its frontmatter, which this rewrites to the marker, so a rename
 * that kept them all pointing at the file is for the person to do.
 *
 * Git history keeps what was committed before; rewriting it is the person's call.
 */
import { chmodSync, existsSync, statSync } from 'node:fs';
import { MaestroError } from '../../core/errors.js';
import { redactSecrets } from '../../core/redact.js';
import { writeFileAtomic } from '../../lib/atomicWrite.js';
import { appendKnowledgeLog } from '../wiki/log.js';
import { readWikiText, redactWikiText, walkWiki, wikiFormat, type SecretHit, type SecretName } from './secrets.js';

export interface RedactedFile {
  /** The path as shown: redacted, in case a folder's or the file's own name holds a secret. */
  path: string;
  hits: SecretHit[];
  written: boolean;
}

export interface WikiRedaction {
  wikiRoot: string;
  dryRun: boolean;
  files: RedactedFile[];
  /** Names that hold a secret: left for the person to rename. */
  names: Array<Pick<SecretName, 'kinds' | 'isDirectory'> & { path: string }>;
}

/** A file rewritten under us is read again this many times before we give up on it. */
const ATTEMPTS = 5;

export interface RedactOptions {
  dryRun: boolean;
  now: Date;
  /** Test seam: called with a file's path when its new text is ready to be renamed over it. */
  beforeRename?: (path: string) => void;
}

export function redactWiki(wikiRoot: string, opts: RedactOptions): WikiRedaction {
  if (!existsSync(wikiRoot) || !statSync(wikiRoot).isDirectory()) {
    throw new MaestroError('BAD_INPUT', `No wiki folder at ${wikiRoot}: nothing to redact. Run this in the folder that holds wiki/, or set FLOW_WIKI_DIR to the wiki.`);
  }
  const { files, names } = walkWiki(wikiRoot);
  const done: RedactedFile[] = [];
  for (const path of files) {
    const result = redactFile(path, opts);
    if (result) done.push(result);
  }
  const written = done.filter((f) => f.written);
  if (written.length) {
    const count = written.reduce((n, f) => n + f.hits.length, 0);
    appendKnowledgeLog(wikiRoot, 'compile', 'wiki', `redacted ${count} secret(s) in ${written.length} file(s)`, opts.now);
  }
  return { wikiRoot, dryRun: opts.dryRun, files: done, names: names.map((n) => ({ path: n.shown, kinds: n.kinds, isDirectory: n.isDirectory })) };
}

/** Thrown inside the atomic write when the file moved under us; the write drops its temporary file. */
class ChangedUnderUs extends Error {}

function redactFile(path: string, opts: RedactOptions): RedactedFile | null {
  const shown = redactSecrets(path);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o7777;
    } catch {
      return null; // removed since the walk
    }
    const text = readWikiText(path);
    if (text === null) return null;
    const { text: redacted, hits } = redactWikiText(text, wikiFormat(path));
    if (!hits.length || redacted === text) return null;
    if (opts.dryRun) return { path: shown, hits, written: false };
    try {
      writeFileAtomic(path, redacted, {
        mode,
        beforeRename: (tmp) => {
          // The mode the file had, exactly: the umask would otherwise take bits off the temporary file's.
          chmodSync(tmp, mode);
          opts.beforeRename?.(path);
          // By content: an edit of the same size within the file system's timestamp tick leaves size and mtime as they were.
          if (readWikiText(path) !== text) throw new ChangedUnderUs();
        },
      });
      return { path: shown, hits, written: true };
    } catch (err) {
      if (!(err instanceof ChangedUnderUs)) throw err;
    }
  }
  throw new MaestroError('INTERNAL', `${shown} kept changing while it was being redacted (${ATTEMPTS} tries): stop what writes it (the observer) and run \`maestro wiki redact\` again.`);
}
