/**
 * A claimer process for the multi-process suites and bench:core.
 *   claimer.ts claim <url> <owner>    claim until nothing is claimable; prints {"owner", "won": [ids], "attempts": claim transactions, "ms", "cpuMs": its CPU while claiming}
 *   claimer.ts migrate <url>          migrate; prints {"applied": [...]}
 * Waits for "go" on stdin (if MAESTRO_WAIT_GO=1) so that every process starts claiming at once,
 * a claimer connected and warmed up (warmUp).
 */
import { once } from 'node:events';
import { migrate } from '../../src/store/migrate.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';

/** Ready tasks looked at per claim transaction, and how many of them one transaction takes. */
const SLICE = 256;
const BATCH = 16;
/** Claim passes each process makes before "go" (see warmUp). */
const WARM_UP = 200;

const [mode, url, owner = `pid-${process.pid}`] = process.argv.slice(2);
if (!mode || !url) {
  process.stderr.write('usage: claimer.ts claim|migrate <url> [owner]\n');
  process.exit(2);
}

const db = openDatabase(url);

/**
 * The best claimable tasks, ids only: the scheduler reads (id, updated_at) of claimable work
 * and full rows only of what changed (readyWork.ts), never the whole slice again.
 */
async function claimableSlice(): Promise<{ id: string; projectId: string }[]> {
  const rows = await db.all<{ id: string; project_id: string }>(
    `SELECT id, project_id FROM tasks WHERE status = 'ready' AND claimed_at IS NULL AND (next_eligible_at IS NULL OR next_eligible_at <= $1) ORDER BY created_at, id LIMIT ${SLICE}`,
    [Date.now()],
  );
  return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
}
async function waitForGo(): Promise<void> {
  if (process.env.MAESTRO_WAIT_GO !== '1') return;
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
}

/**
 * What a daemon has done long before its thousandth claim: connected, prepared the claim
 * statement, and run the claim path often enough for the JIT. Claims of ids that do not
 * exist take nothing, so every real claim is still made after "go".
 */
async function warmUp(store: ReturnType<typeof createStore>): Promise<void> {
  const ranked = [{ id: `warm-up-${owner}`, projectId: 'none' }];
  for (let i = 0; i < WARM_UP; i++) {
    await claimableSlice();
    await store.tasks.claimBest({ ranked, owner, leaseMs: 10 * 60_000, max: BATCH });
  }
}

try {
  if (mode === 'migrate') {
    await waitForGo();
    const result = await migrate(db);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const store = createStore(db);
    await warmUp(store);
    await waitForGo();
    const won: string[] = [];
    let attempts = 0;
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    for (;;) {
      // The scheduler's path: a slice of ready work, claimed best first in one transaction,
      // rows another claimer holds skipped (PostgreSQL SKIP LOCKED), each claim with its event.
      // The slice is read again only when a transaction finds nothing left in it.
      let slice = await claimableSlice();
      if (!slice.length) break;
      while (slice.length) {
        attempts++;
        const got = await store.tasks.claimBest({ ranked: slice, owner, leaseMs: 10 * 60_000, max: BATCH });
        if (!got.length) break;
        for (const c of got) won.push(c.id);
        // Best first: every candidate up to the last one won was won, taken or held by another
        // claimer. Like the scheduler (which never offers a candidate twice in a pass), go on after it.
        const last = Math.max(...got.map((c) => slice.findIndex((s) => s.id === c.id)));
        slice = slice.slice(last + 1);
      }
    }
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu0);
    const cpuMs = (used.user + used.system) / 1000;
    const rssMb = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(`${JSON.stringify({ owner, won, attempts, ms, cpuMs, rssMb })}\n`);
  }
} finally {
  await db.close();
}
