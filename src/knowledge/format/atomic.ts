/**
 * Knowledge's corpus writes go through the one atomic write (src/lib/atomicWrite.ts)
 * with the fixed `<target>.tmp` name: callers hold `withCorpusLock`, which is what
 * makes a fixed name safe, and a crash then leaves at most one temporary file.
 *
 * The lock keeps Maestro's writers apart, not a person's editor or another tool (a
 * `git pull`, a formatter): a file saved by one of them between Maestro's read and
 * its rename was overwritten without a word. A caller that rewrites a file it read
 * passes that text (`readAs`; null: the file did not exist): the file must still
 * hold it just before the rename, else KNOWLEDGE_CONFLICT and nothing is written.
 */
import { writeFileAtomic as atomicWrite } from '../../lib/atomicWrite.js';

export interface AtomicWriteHooks {
  /** Test seam: called after the temporary file is durable and before the rename. */
  beforeRename?: (tmpPath: string) => void;
}

export function writeFileAtomic(target: string, data: string | Uint8Array, hooks: AtomicWriteHooks = {}, readAs?: string | null): void {
  atomicWrite(target, data, { tmp: 'fixed', ...(hooks.beforeRename ? { beforeRename: hooks.beforeRename } : {}), ...(readAs !== undefined ? { readAs } : {}) });
}
