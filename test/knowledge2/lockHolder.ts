/**
 * Holds the corpus lock of one file until killed, for the lock-timeout row of
 * seed 000 §11.1: `lockHolder.ts <file>` prints "held" once it owns the lock.
 */
import { withCorpusLock } from '../../src/knowledge/format/lock.js';

const [file] = process.argv.slice(2) as [string];
withCorpusLock([file], () => {
  process.stdout.write('held\n');
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (;;) Atomics.wait(cell, 0, 0, 60_000);
});
