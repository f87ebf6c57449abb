/**
 * Knowledge's corpus writes go through the one atomic write (src/lib/atomicWrite.ts)
 * with the fixed `<target>.tmp` name: callers hold `withCorpusLock`, which is what
 * makes a fixed name safe, and a crash then leaves at most one temporary file.
 */
import { writeFileAtomic as atomicWrite } from '../../lib/atomicWrite.js';

export interface AtomicWriteHooks {
  /** Test seam: called after the temporary file is durable and before the rename. */
  beforeRename?: (tmpPath: string) => void;
}

export function writeFileAtomic(target: string, data: string | Uint8Array, hooks: AtomicWriteHooks = {}): void {
  atomicWrite(target, data, { tmp: 'fixed', ...(hooks.beforeRename ? { beforeRename: hooks.beforeRename } : {}) });
}
