/**
 * How a run ended, as its daemon recorded it: the line `task logs --follow` prints when a run's stream ends with
 * the worker's result. The result item only says the worker finished; the daemon may then record the run otherwise
 * (failed when its lease was lost after a kill -9 and another daemon expired the claim, cancelled when its result
 * was fenced out), and the runs table is what the board, `run show` and the next claim go by. So the line is the
 * stored status and error, read once the daemon has recorded them (a replay can read the outbox a tick ahead of
 * the ingestor).
 */
import { MaestroError } from '../../core/errors.js';
import type { Run } from '../../core/types.js';
import type { ApiClient, SseEvent } from '../../api/client.js';
import { hangingIndent, oneLine } from '../../lib/visible.js';

export type RunOutcome = Pick<Run, 'id' | 'kind' | 'status' | 'error'>;

/** How long a run whose worker finished may stay `running` in the store before the line says it is not recorded yet. */
const RECORD_WAIT_MS = 30_000;
const LOOK_EVERY_MS = 250;

/** The run as stored once it is no longer running (or still running after RECORD_WAIT_MS, or when `stop` aborts). */
export async function recordedOutcome(client: ApiClient, runId: string, stop: AbortSignal): Promise<RunOutcome> {
  const until = Date.now() + RECORD_WAIT_MS;
  for (;;) {
    const { run } = await client.get<{ run: Run }>(`/api/runs/${encodeURIComponent(runId)}`);
    if (run.status !== 'running' || Date.now() >= until || stop.aborted) return run;
    await new Promise((r) => setTimeout(r, LOOK_EVERY_MS));
  }
}

/** The line for a run that ended: its recorded status, with its error (over lines maybe, indented under it). */
export function outcomeLine(run: RunOutcome): string {
  const id = oneLine(run.id);
  const why = run.error ? `: ${hangingIndent(run.error, '  ')}` : '';
  switch (run.status) {
    case 'succeeded':
      return `\n✓ run ${id} finished (${run.kind})\n`;
    case 'failed':
      return `\n✗ run ${id} failed (${run.kind})${why}\n`;
    case 'cancelled':
      return `\n✗ run ${id} was cancelled (${run.kind})${why}\n`;
    case 'running':
      return `\n… run ${id} ended (${run.kind}); its daemon has not recorded how yet: maestro run show ${id}\n`;
    default: {
      const never: never = run.status;
      return never;
    }
  }
}

/** The line for a run whose worker finished (`runId`, `kind` from its result item): from the store, or why not. */
export async function finishedRunLine(client: ApiClient, ended: { runId: string; kind: string }, stop: AbortSignal): Promise<{ line: string; run: RunOutcome | null }> {
  try {
    const run = await recordedOutcome(client, ended.runId, stop);
    return { line: outcomeLine(run), run };
  } catch (err) {
    if (!(err instanceof MaestroError)) throw err;
    const id = oneLine(ended.runId);
    return { line: `\n… run ${id} ended (${oneLine(ended.kind)}); how it was recorded could not be read (${err.message}): maestro run show ${id}\n`, run: null };
  }
}

/** The run a stream's result item names, and its kind (null: not a result item the CLI can read). */
export function resultOf(e: SseEvent): { runId: string; kind: string } | null {
  try {
    const data = JSON.parse(e.data) as { runId?: unknown; kind?: unknown };
    return typeof data.runId === 'string' ? { runId: data.runId, kind: String(data.kind ?? '?') } : null;
  } catch {
    return null;
  }
}
