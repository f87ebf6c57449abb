/**
 * Knowledge's corpus writes go through the one atomic write (src/lib/atomicWrite.ts)
 * with the fixed `<target>.tmp` name: callers hold `withCorpusLock`, which is what
 * makes a fixed name safe, and a crash then leaves at most one temporary file.
 *
 * The lock keeps Maestro's writers apart, not a person's editor or another tool (a
 * `git pull`, a formatter): a file saved by one of them between Maestro's read and
 * its rename was overwritten without a word. A caller that rewrites a file it read
 * passes that text (`readAs`; null: the file did not exist); just before the rename
 * the file must still hold it, by content, else KNOWLEDGE_CONFLICT and nothing is
 * written. (What is left is the moment between that look and the rename.)
 */
import { readFileSync } from 'node:fs';
import { MaestroError } from '../../core/errors.js';
import { writeFileAtomic as atomicWrite } from '../../lib/atomicWrite.js';

export interface AtomicWriteHooks {
  /** Test seam: called after the temporary file is durable and before the rename. */
  beforeRename?: (tmpPath: string) => void;
}

export function writeFileAtomic(target: string, data: string | Uint8Array, hooks: AtomicWriteHooks = {}, readAs?: string | null): void {
  atomicWrite(target, data, {
    tmp: 'fixed',
    beforeRename: (tmp) => {
      hooks.beforeRename?.(tmp);
      if (readAs !== undefined && currentText(target) !== readAs) {
        throw new MaestroError(
          'KNOWLEDGE_CONFLICT',
          `${target} ${readAs === null ? 'was created' : 'changed'} while Maestro was writing it (another program saved it after Maestro read it): nothing was written, and the file is as that program left it. Run the command again.`,
          { details: { file: target } },
        );
      }
    },
  });
}

function currentText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
