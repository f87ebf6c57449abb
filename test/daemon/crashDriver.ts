/**
 * A child process for the crash-points suite: runs the crash-points workload
 * (crashWorkload.ts) on <url> through a store with a fault seam.
 *   crashDriver.ts <url> record         prints every seam point it passes, one a line
 *   crashDriver.ts <url> kill <point>   SIGKILLs itself the first time it reaches <point>
 * Exits 0 with "finished" when the workload ends without reaching the point.
 */
import { openMigratedDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';
import { runWorkload, workloadClock } from './crashWorkload.js';

const [url, mode, killAt] = process.argv.slice(2);
if (!url || (mode !== 'record' && mode !== 'kill')) {
  process.stderr.write('usage: crashDriver.ts <url> record | kill <point>\n');
  process.exit(2);
}

const faults = {
  point(at: string) {
    // Through the stream, not writeSync(1): stdout may be a non-blocking pipe, and a parent slow to
    // read it on a loaded machine made a direct write fail with EAGAIN. Nothing is killed in record mode.
    if (mode === 'record') process.stdout.write(`${at}\n`);
    // As abrupt as a power cut for this process: no finally, no rollback sent, no close.
    else if (at === killAt) process.kill(process.pid, 'SIGKILL');
  },
};

const db = await openMigratedDatabase(url);
const probe = createStore(db);
const clock = await workloadClock(probe);
const store = createStore(db, clock.now, { faults, handClock: true }); // leases by the workload's clock, on PostgreSQL too
await runWorkload(store, clock);
await store.close();
process.stdout.write('finished\n');
