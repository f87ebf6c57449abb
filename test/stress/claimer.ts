/**
 * A claimer process for the multi-process suites and bench:core.
 *   claimer.ts claim <url> <owner>    claim until nothing is claimable; prints {"owner", "won": [ids], "attempts": claim transactions}
 *   claimer.ts migrate <url>          migrate; prints {"applied": [...]}
 * Waits for "go" on stdin (if MAESTRO_WAIT_GO=1) so that every process starts claiming at once.
 */
import { once } from 'node:events';
import { listClaimable } from '../../src/store/ops/claim.js';
import { migrate } from '../../src/store/migrate.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';

/** Ready tasks looked at per claim transaction, and how many of them one transaction takes. */
const SLICE = 256;
const BATCH = 16;

const [mode, url, owner = `pid-${process.pid}`] = process.argv.slice(2);
if (!mode || !url) {
  process.stderr.write('usage: claimer.ts claim|migrate <url> [owner]\n');
  process.exit(2);
}

if (process.env.MAESTRO_WAIT_GO === '1') {
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
}

const db = openDatabase(url);
try {
  if (mode === 'migrate') {
    const result = await migrate(db);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const store = createStore(db);
    const won: string[] = [];
    let attempts = 0;
    const started = performance.now();
    for (;;) {
      // The scheduler's path: a slice of ready work, claimed best first in one transaction,
      // rows another claimer holds skipped (PostgreSQL SKIP LOCKED), each claim with its event.
      // The slice is read again only when a transaction finds nothing left in it.
      let slice = (await listClaimable(db, { now: Date.now(), limit: SLICE })).map((t) => ({ id: t.id, projectId: t.projectId }));
      if (!slice.length) break;
      while (slice.length) {
        attempts++;
        const got = await store.tasks.claimBest({ ranked: slice, owner, leaseMs: 10 * 60_000, max: BATCH });
        if (!got.length) break;
        for (const c of got) won.push(c.id);
        const mine = new Set(got.map((c) => c.id));
        slice = slice.filter((c) => !mine.has(c.id));
      }
    }
    const ms = performance.now() - started;
    const rssMb = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(`${JSON.stringify({ owner, won, attempts, ms, rssMb })}\n`);
  }
} finally {
  await db.close();
}
