/**
 * The worker process: `node worker.js <runDir>` (or via tsx from the sources).
 * It reads job.json, runs the pipeline, writes the outbox, heartbeats, and on
 * SIGTERM aborts the run at its next safe point, writes a final INTERRUPTED
 * error record (every record is one whole line) and exits 0. Restarted on the
 * same run directory it skips the stages stages.json marks done.
 *
 * `node worker.js --warm` is a worker kept warm by the daemon's pool
 * (workerPool.ts): it takes run directories one at a time over its IPC
 * channel and answers `{ done, code }` after each run's final record. Only
 * the channel is new; a run's state is in its files as for a cold worker.
 * When the channel closes (the daemon died or detached) it finishes the run
 * it is on, if any, and exits, so the next daemon adopts that run by pid as
 * it would a cold worker's. SIGTERM aborts the current run and exits.
 *
 * Exit codes: 0 the run ended with a result or error record, 2 bad usage or an
 * unreadable job (an error record is still written when the run dir exists).
 */
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { setRunDir } from '../lib/agentEnv.js';
import { closeInheritedDescriptors } from '../lib/inheritedDescriptors.js';
import { killGroupMembers } from '../lib/processes.js';
import { Spawner } from '../lib/spawner/spawner.js';
import { runGitThrough } from '../git/git.js';
import { readJsonFile } from './protocol/files.js';
import { JOB_FILE, readJob } from './protocol/job.js';
import { OutboxWriter } from './protocol/outbox.js';
import { runPipeline } from './run.js';

/** One run on `runDir`; aborting `signal` stops it at its next safe point. */
export async function workerMain(runDir: string, signal: AbortSignal, env: NodeJS.ProcessEnv): Promise<number> {
  let job;
  try {
    job = readJob(runDir);
  } catch (err) {
    if (existsSync(runDir)) {
      // Keep the ids when the file is readable at all, so the daemon can route the error.
      let ids = { traceId: 'unknown', runId: 'unknown' };
      try {
        const raw = readJsonFile(join(runDir, JOB_FILE)) as { traceId?: unknown; runId?: unknown };
        if (typeof raw.traceId === 'string' && typeof raw.runId === 'string') ids = { traceId: raw.traceId, runId: raw.runId };
      } catch {
        // unreadable: the ids stay unknown
      }
      const e = err as Error & { code?: string };
      const code = e.code ?? 'JOB_INVALID';
      new OutboxWriter(runDir, ids).write({
        type: 'error', code, message: e.message, stage: null, retryable: false,
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [], agentCalls: 0 },
        needsAttention: { reason: code.toLowerCase(), details: { message: e.message } },
      });
    }
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const outbox = new OutboxWriter(runDir, { traceId: job.traceId, runId: job.runId });
  const beat = () => outbox.write({ type: 'heartbeat', pid: process.pid });
  beat();
  const heartbeat = setInterval(beat, job.heartbeatMs);
  try {
    await runPipeline(job, { runDir, signal, outbox, env });
    return 0;
  } finally {
    clearInterval(heartbeat);
  }
}

/** A cold worker: one run, SIGTERM or SIGINT abort it. */
async function coldMain(runDir: string): Promise<number> {
  const controller = new AbortController();
  const onTerm = () => controller.abort();
  process.once('SIGTERM', onTerm);
  process.once('SIGINT', onTerm);
  return workerMain(runDir, controller.signal, process.env);
}

/** Parent → warm worker: run this directory. Warm worker → parent: ready, then one `done` per run. */
export type WarmRequest = { run: string };
export type WarmReply = { ready: true } | { done: string; code: number };

/**
 * A warm worker: runs from its IPC channel, one at a time, until the channel closes or SIGTERM.
 * Its git commands (about six a run) go through a spawner helper in its own process group, for
 * the reason the daemon's do (src/lib/spawner/spawner.ts); the helper outlives each run.
 */
function warmMain(): Promise<number> {
  const spawner = new Spawner({ detached: false, onGiveUp: (message) => process.stderr.write(`${message}\n`) });
  spawner.start();
  runGitThrough(spawner);
  return new Promise((resolve) => {
    let current: AbortController | null = null;
    let closing = false;
    const end = (code: number) => {
      process.off('message', onMessage);
      resolve(code);
    };
    const close = () => {
      closing = true;
      current?.abort();
      if (!current) end(0);
    };
    const onMessage = (msg: WarmRequest) => {
      // The pool sends one run at a time; anything else is a bug on its side, not a run to fail.
      if (current || closing || typeof msg?.run !== 'string') return;
      const runDir = msg.run;
      const controller = (current = new AbortController());
      // `maestro load` in the agent records into this run (childEnv passes the worker's environment on).
      setRunDir(runDir);
      workerMain(runDir, controller.signal, process.env).then((code) => {
        current = null;
        setRunDir(null);
        // What the run started and left running goes now, as it would with a cold worker's exit (it leads its group).
        killGroupMembers(process.pid, [process.pid, ...(spawner.helperPid ? [spawner.helperPid] : [])]);
        // Aborted by SIGTERM, or the daemon is gone: exit, as a cold worker would.
        if (controller.signal.aborted || closing || !process.connected) return end(0);
        process.send!({ done: runDir, code } satisfies WarmReply);
      }, (err: unknown) => {
        process.stderr.write(`worker crashed: ${(err as Error)?.stack ?? String(err)}\n`);
        process.exit(1);
      });
    };
    process.on('message', onMessage);
    // The daemon died or let go: the run in progress goes on (the next daemon adopts it), then the worker ends.
    process.once('disconnect', () => {
      closing = true;
      if (!current) end(0);
    });
    process.once('SIGTERM', close);
    process.once('SIGINT', close);
    process.send!({ ready: true } satisfies WarmReply);
  });
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    // realpath: a symlinked install path (e.g. /tmp on macOS) must still count as "run directly".
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return import.meta.url === pathToFileURL(entry).href;
  }
}

const isMain = isEntryPoint();
if (isMain) {
  // Nothing its starter left open goes on to the agent, the checks or git (lib/inheritedDescriptors.ts).
  closeInheritedDescriptors();
  const runDir = process.argv[2];
  const warm = runDir === '--warm' && typeof process.send === 'function';
  if (!runDir || (runDir === '--warm' && !warm)) {
    process.stderr.write('usage: worker <runDir> | worker --warm (with an IPC channel)\n');
    process.exit(2);
  }
  (warm ? warmMain() : coldMain(runDir)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`worker crashed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
