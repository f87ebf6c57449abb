/**
 * The worker process: `node worker.js <runDir>` (or via tsx from the sources).
 * It reads job.json, runs the pipeline, writes the outbox, heartbeats, and on
 * SIGTERM aborts the run at its next safe point, writes a final INTERRUPTED
 * error record (every record is one whole line) and exits 0. Restarted on the
 * same run directory it skips the stages stages.json marks done.
 *
 * Exit codes: 0 the run ended with a result or error record, 2 bad usage or an
 * unreadable job (an error record is still written when the run dir exists).
 */
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { readJsonFile } from './protocol/files.js';
import { JOB_FILE, readJob } from './protocol/job.js';
import { OutboxWriter } from './protocol/outbox.js';
import { runPipeline } from './run.js';

export async function workerMain(runDir: string): Promise<number> {
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
  const controller = new AbortController();
  const onTerm = () => controller.abort();
  process.once('SIGTERM', onTerm);
  process.once('SIGINT', onTerm);
  const outbox = new OutboxWriter(runDir, { traceId: job.traceId, runId: job.runId });
  const beat = () => outbox.write({ type: 'heartbeat', pid: process.pid });
  beat();
  const heartbeat = setInterval(beat, job.heartbeatMs);
  try {
    await runPipeline(job, { runDir, signal: controller.signal, outbox });
    return 0;
  } finally {
    clearInterval(heartbeat);
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onTerm);
  }
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
  const runDir = process.argv[2];
  if (!runDir) {
    process.stderr.write('usage: worker <runDir>\n');
    process.exit(2);
  }
  workerMain(runDir).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`worker crashed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
