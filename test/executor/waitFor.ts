/** Waiting on a run's outbox for a record, not on the clock. */
import { watch } from 'node:fs';
import { readOutbox, type OutboxRecord } from '../../src/executor/protocol/outbox.js';
import { budget } from '../helpers/budget.js';

export function waitForRecord(runDir: string, predicate: (r: OutboxRecord) => boolean, quietMs = 60_000): Promise<OutboxRecord> {
  const timeoutMs = budget(quietMs);
  return new Promise((resolve, reject) => {
    let done = false;
    const check = () => {
      if (done) return;
      const hit = readOutbox(runDir).records.find(predicate);
      if (hit) finish(null, hit);
    };
    // fs.watch wakes us on each append; the interval covers platforms where it misses an event.
    const watcher = watch(runDir, check);
    const poll = setInterval(check, 100);
    const timer = setTimeout(() => finish(new Error(`no matching outbox record in ${runDir} within ${timeoutMs} ms`)), timeoutMs);
    function finish(err: Error | null, record?: OutboxRecord) {
      done = true;
      watcher.close();
      clearInterval(poll);
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(record!);
    }
    check();
  });
}
