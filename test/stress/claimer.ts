/**
 * A claimer process for the multi-process suites and bench:core.
 *   claimer.ts claim <url> <owner>    claim until nothing is claimable; prints {"owner", "won": [ids]}
 *   claimer.ts migrate <url>          migrate; prints {"applied": [...]}
 * Waits for "go" on stdin (if MAESTRO_WAIT_GO=1) so that every process starts claiming at once.
 */
import { once } from 'node:events';
import { claimTask, listClaimable } from '../../src/store/ops/claim.js';
import { migrate } from '../../src/store/migrate.js';
import { openDatabase } from '../../src/store/open.js';

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
    const won: string[] = [];
    let attempts = 0;
    const started = performance.now();
    for (;;) {
      const batch = await listClaimable(db, { now: Date.now(), limit: 32 });
      if (!batch.length) break;
      // Shuffle so that eight claimers do not all fight over the same head of the queue.
      for (let i = batch.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [batch[i], batch[j]] = [batch[j]!, batch[i]!];
      }
      for (const t of batch) {
        attempts++;
        const r = await claimTask(db, { id: t.id, owner, now: Date.now(), leaseMs: 10 * 60_000 });
        if (r.won) won.push(t.id);
      }
    }
    const ms = performance.now() - started;
    const rssMb = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(`${JSON.stringify({ owner, won, attempts, ms, rssMb })}\n`);
  }
} finally {
  await db.close();
}
