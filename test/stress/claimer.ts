/**
 * A claimer process for the multi-process suites and bench:core.
 *   claimer.ts claim <url> <owner> [warm-up passes]
 *                                     claim until nothing is claimable; prints {"owner", "won": [ids], "attempts": claim
 *                                     transactions, "ms", "cpuMs": its CPU while claiming, "switches": its context switches meanwhile}
 *   claimer.ts migrate <url>          migrate; prints {"applied": [...]}
 * Waits for "go" on stdin (if MAESTRO_WAIT_GO=1) so that every process starts claiming at once,
 * a claimer connected and warmed up (warmUp).
 */
import { once } from 'node:events';
import { migrate } from '../../src/store/migrate.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';

/** Ready tasks read at once, how many one claim transaction takes, and how many it is offered (as the scheduler does: twice its slots and 32). */
const SLICE = 256;
const BATCH = 16;
const OFFER = BATCH * 2 + 32;

const [mode, url, owner = `pid-${process.pid}`, passes = '20'] = process.argv.slice(2);
/** Claim passes each process makes before "go" (see warmUp). */
const WARM_UP = Number(passes);
if (!mode || !url || !Number.isInteger(WARM_UP) || WARM_UP < 0) {
  process.stderr.write('usage: claimer.ts claim|migrate <url> [owner] [warm-up passes, a whole number ≥ 0]\n');
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
function contextSwitches(): number {
  const r = process.resourceUsage();
  return r.voluntaryContextSwitches + r.involuntaryContextSwitches;
}

async function waitForGo(): Promise<void> {
  if (process.env.MAESTRO_WAIT_GO !== '1') return;
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
}

/**
 * What a daemon has done long before its thousandth claim: connected, prepared the claim
 * statement, and claimed often enough for the JIT to have compiled the whole path, the
 * rows coming back included (claims of ids that do not exist left a fifth of a claimer's
 * CPU to compiling during the measured claims). So each claimer first claims tasks of
 * its own, in a project of its own created with them (`warm-up-<owner>`); every claim
 * it reports is still made after "go".
 */
async function warmUp(store: ReturnType<typeof createStore>): Promise<void> {
  const project = `warm-up-${owner}`;
  const ids = Array.from({ length: WARM_UP * BATCH }, (_, i) => `${project}-${i}`);
  // Created in the far future, so that the slices of the real tasks (oldest first) never reach them.
  const at = Date.now() + 100 * 365 * 86_400_000;
  await db.transaction(async (tx) => {
    await tx.run(`INSERT INTO projects (id, name, repo_path, config, created_at, updated_at) VALUES ($1, $1, '/warm-up', '{}', $2, $2)`, [project, at]);
    for (const id of ids) {
      await tx.run(`INSERT INTO tasks (id, project_id, title, complexity, status, priority, created_at, updated_at) VALUES ($1, $2, 'warm-up', 'easy', 'ready', 1, $3, $3)`, [id, project, at]);
    }
  });
  for (let i = 0; i < WARM_UP; i++) {
    await claimableSlice();
    const ranked = ids.slice(i * BATCH, (i + 1) * BATCH).map((id) => ({ id, projectId: project }));
    const got = await store.tasks.claimBest({ ranked, owner, leaseMs: 10 * 60_000, max: BATCH });
    if (got.length !== ranked.length) throw new Error(`warm-up claimed ${got.length} of its own ${ranked.length} tasks`);
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
    const switches0 = contextSwitches();
    for (;;) {
      // The scheduler's path: a slice of ready work, offered best first a few more than a
      // transaction takes (scheduler.ts SLICE_EXTRA), claimed in one transaction, rows another
      // claimer holds skipped (PostgreSQL SKIP LOCKED), each claim with its event. The slice is
      // read again once its candidates have been offered; a full slice has more work behind it, so
      // its tail is read again with what follows and every offer is a full window, as the
      // scheduler's are (it offers from every claimable task). Offering the tail alone made each
      // claimer's last transaction of a slice a partial one (1,677 transactions for 20,000 claims
      // of 16 with four claimers on PostgreSQL; 1,556 with full windows).
      const slice = await claimableSlice();
      if (!slice.length) break;
      const end = slice.length === SLICE ? slice.length - OFFER + 1 : slice.length;
      let next = 0;
      while (next < end) {
        const offered = slice.slice(next, next + OFFER);
        attempts++;
        const got = await store.tasks.claimBest({ ranked: offered, owner, leaseMs: 10 * 60_000, max: BATCH });
        for (const c of got) won.push(c.id);
        // Best first: every candidate up to the last one won was won, taken or held by another
        // claimer. Like the scheduler (which never offers a candidate twice in a pass), go on after it,
        // or after them all when none was won.
        next += got.length ? Math.max(...got.map((c) => offered.findIndex((s) => s.id === c.id))) + 1 : offered.length;
      }
    }
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu0);
    const cpuMs = (used.user + used.system) / 1000;
    const switches = contextSwitches() - switches0;
    const rssMb = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(`${JSON.stringify({ owner, won, attempts, ms, cpuMs, switches, rssMb })}\n`);
  }
} finally {
  await db.close();
}
