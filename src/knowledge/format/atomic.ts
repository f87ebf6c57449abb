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
import { writeFileAtomic as atomicWrite, writeFileAtomicOffLoop as atomicWriteOffLoop } from '../../lib/atomicWrite.js';

export { settleWrite } from '../../lib/atomicWrite.js';

export interface AtomicWriteHooks {
  /** Test seam: called after the temporary file is durable and before the rename. */
  beforeRename?: (tmpPath: string) => void;
}

export function writeFileAtomic(target: string, data: string | Uint8Array, hooks: AtomicWriteHooks = {}, readAs?: string | null): void {
  atomicWrite(target, data, { tmp: 'fixed', ...(hooks.beforeRename ? { beforeRename: hooks.beforeRename } : {}), ...(readAs !== undefined ? { readAs } : {}) });
}

/** A file's new text, for a caller that writes it now or off the event loop (session/ops.ts completeAndSeal). */
export interface FileWrite {
  file: string;
  text: string;
}

/**
 * writeFileAtomic with its fsyncs in libuv's threadpool (lib/atomicWrite.ts writeFileAtomicOffLoop), for the
 * daemon's run end: until it is done, a write of the same file in this process, or a reader that settles it
 * (`settleWrite`: the session, run and receipt readers), finishes it first.
 */
export function writeFileAtomicOffLoop(w: FileWrite): Promise<void> {
  return atomicWriteOffLoop(w.file, w.text, { tmp: 'fixed' });
}

/** Does each write the steps yield (writeFileAtomic) before they go on; their result. */
export function writtenNow<T>(steps: Generator<FileWrite, T, void>): T {
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    writeFileAtomic(step.value.file, step.value.text);
  }
}

/** writtenNow with each write's fsyncs off the event loop (writeFileAtomicOffLoop). */
export async function writtenOffLoop<T>(steps: Generator<FileWrite, T, void>): Promise<T> {
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    await writeFileAtomicOffLoop(step.value);
  }
}
