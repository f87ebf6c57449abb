/**
 * `maestro task logs`: the transcript of the latest run, or with --follow the
 * live SSE stream of the task's current run. A dropped stream is reopened
 * with Last-Event-ID so nothing is missed or printed twice; following ends
 * when the task is finished (done, cancelled, superseded) or needs attention.
 */
import { MaestroError } from '../../core/errors.js';
import { TERMINAL_STATUSES } from '../../core/status.js';
import type { Task } from '../../core/types.js';
import type { ApiClient, SseEvent } from '../client.js';

interface TranscriptEntry {
  at?: number;
  stage?: string;
  role?: string;
  text?: string;
}

export async function printTranscript(client: ApiClient, id: string, json: boolean): Promise<void> {
  const res = await client.raw('GET', `/api/tasks/${encodeURIComponent(id)}/transcript`);
  const text = await res.text();
  const entries: TranscriptEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as TranscriptEntry);
    } catch {
      // a torn last line while the run writes: skip it
    }
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ taskId: id, entries }, null, 2)}\n`);
    return;
  }
  if (!entries.length) {
    process.stdout.write(`No transcript yet for ${id}.\n`);
    return;
  }
  for (const e of entries) process.stdout.write(`[${e.stage ?? '?'}] ${e.role ?? '?'}: ${e.text ?? ''}\n`);
}

/** Statuses after which no more output comes without a person acting (cancelled and needs_attention wait for a retry). */
const FOLLOW_ENDS: readonly string[] = [...TERMINAL_STATUSES, 'cancelled', 'needs_attention'];

function finished(status: string): boolean {
  return FOLLOW_ENDS.includes(status);
}

function render(e: SseEvent): string {
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(e.data) as Record<string, unknown>;
  } catch {
    return '';
  }
  switch (e.event) {
    case 'token':
      return String(data.text ?? '');
    case 'phase':
      return `\n── ${String(data.stage ?? '')}: ${String(data.state ?? '')} ──\n`;
    case 'clarify':
      return `\n? ${String(data.question ?? '')}\n  (answer with: maestro task reply <id> "<answer>")\n`;
    case 'error':
      return `\n! ${String(data.code ?? 'error')}: ${String(data.message ?? '')}\n`;
    case 'result':
      return `\n✓ run ${String(data.runId ?? '')} finished (${String(data.kind ?? '')})\n`;
    default:
      return '';
  }
}

const RETRY_MS = [250, 500, 1000, 2000, 5000];
/** How long the daemon may stay away before following gives up. */
const GIVE_UP_MS = 60_000;

export async function followTask(client: ApiClient, id: string, json: boolean): Promise<void> {
  const path = `/api/tasks/${encodeURIComponent(id)}`;
  const status = async () => (await client.get<{ task: Task }>(path)).task.status;
  if (finished(await status())) {
    await printTranscript(client, id, json);
    return;
  }
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once('SIGINT', stop);
  let lastEventId: string | null = null;
  let failures = 0;
  let downSince: number | null = null;
  try {
    while (!stopped.signal.aborted) {
      // One connection per turn of the loop. At the end of a run the stream is closed on
      // purpose to look at the task's status (no request runs beside the open stream), then
      // reopened from Last-Event-ID if the task goes on.
      const connection = new AbortController();
      const onStop = () => connection.abort();
      stopped.signal.addEventListener('abort', onStop);
      let runEnded = false;
      try {
        await client.readSse(`${path}/stream`, {
          lastEventId,
          signal: connection.signal,
          onOpen: () => {
            failures = 0;
            downSince = null;
          },
          onEvent: (e) => {
            if (e.id) lastEventId = e.id;
            if (json) process.stdout.write(`${JSON.stringify({ id: e.id, event: e.event, data: JSON.parse(e.data) })}\n`);
            else process.stdout.write(render(e));
            if (e.event === 'result' || e.event === 'error') {
              runEnded = true;
              connection.abort();
            }
          },
        });
      } catch (err) {
        // An API error other than "not reachable" (unknown task, bad token) will not heal by retrying.
        if (!connection.signal.aborted && !(err instanceof MaestroError && err.code === 'DAEMON_UNREACHABLE')) throw err;
      } finally {
        stopped.signal.removeEventListener('abort', onStop);
      }
      if (stopped.signal.aborted) break;
      if (!runEnded) {
        // The stream ended or dropped: wait a little, longer each time, then try again.
        downSince ??= Date.now();
        if (Date.now() - downSince > GIVE_UP_MS) throw new MaestroError('DAEMON_UNREACHABLE', `Lost the stream of ${id} and the daemon at ${client.baseUrl} did not come back within ${GIVE_UP_MS / 1000} s.`);
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]));
      }
      try {
        if (finished(await status())) break;
      } catch (err) {
        if (!(err instanceof MaestroError && err.code === 'DAEMON_UNREACHABLE')) throw err;
      }
    }
  } finally {
    process.off('SIGINT', stop);
  }
  if (!json) process.stdout.write('\n');
}
