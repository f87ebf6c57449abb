/**
 * The daemon's RunControl: what the API may do to live runs. Injected
 * instructions and replies go to the run's inbox.json, where the worker picks
 * them up at its next breakpoint; SSE replay reads the run's outbox.
 *
 * Neither reads a whole outbox (they run on the daemon's event loop, and an outbox can be hundreds of MB): a
 * replay reads at most OUTBOX_TAIL_BYTES of outboxes, the newest records that fit, and says which runs' earlier
 * ones it left out; a reply takes its question from the store, where the ingestor recorded it.
 */
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import type { Run, Task } from '../core/types.js';
import type { StagedFile } from '../lib/atomicWrite.js';
import { stageInbox } from '../executor/protocol/inbox.js';
import { oneAtATime } from '../lib/oneAtATime.js';
import { OUTBOX_TAIL_BYTES, OutboxSequence, readOutboxTail, type OutboxRecord } from '../executor/protocol/outbox.js';
import { TRANSCRIPT_FILE } from '../executor/protocol/transcript.js';
import type { Store } from '../store/store.js';
import type { StreamItem } from '../lib/bus.js';


/** What the API may do to live runs (api/server.ts takes one in its deps). */
export interface RunControl {
  /** Appends an instruction for the task's current run's next turn. */
  inject(task: Task, message: string, who: string): Promise<{ runId: string }>;
  /** Answers the clarifying question the task is waiting on. */
  reply(task: Task, answer: string, who: string): Promise<{ runId: string }>;
  /** The transcript file of a run, if it has one. */
  transcriptPath(runId: string): Promise<string | null>;
  /** Stream items of the task's current run after `after` (`<runId>:<seq>`), for SSE resumption, and the runs whose earlier items it left out. */
  replay(taskId: string, after: string | null, maxBytes?: number): Promise<Replay>;
}

/** A replay: the newest items that fit in its bytes, in order, and, per run, where the items it left out end. */
export interface Replay {
  items: StreamItem[];
  /** The first `bytes` of `runId`'s outbox were not read: its items before seq `before` (null: all of them), after the client's Last-Event-ID, are left out. The run's transcript has them. */
  leftOut: Array<{ runId: string; bytes: number; before: number | null }>;
}

/** The seq a tail's series starts at: its first record the next one follows (so not a stray line), else its first. */
function seriesStart(records: readonly OutboxRecord[]): number {
  for (let i = 0; i + 1 < records.length; i++) if (records[i + 1]!.seq === records[i]!.seq + 1) return records[i]!.seq;
  return records[0]?.seq ?? 1;
}

/** The outbox record as a stream item, or null for records SSE does not carry (heartbeats). */
export function toStreamItem(taskId: string, r: OutboxRecord): StreamItem | null {
  const base = { id: `${r.runId}:${r.seq}`, taskId, runId: r.runId, seq: r.seq };
  const at = r.at;
  switch (r.type) {
    case 'token':
      return { ...base, kind: 'token', data: { stage: r.stage, text: r.text, at } };
    case 'phase':
      // A tool call's one-line summary (the command, the file) is what a `tool:<name>` phase is worth watching for.
      return { ...base, kind: 'phase', data: { stage: r.stage, state: r.state, at, ...(typeof r.detail?.summary === 'string' ? { summary: r.detail.summary } : {}) } };
    case 'clarify':
      return { ...base, kind: 'clarify', data: { stage: r.stage, question: r.question, clarifyId: r.clarifyId, at } };
    case 'result':
      return { ...base, kind: 'result', data: { kind: r.kind, usage: r.usage, needsAttention: r.needsAttention ?? null, at } };
    case 'error':
      return { ...base, kind: 'error', data: { code: r.code, message: r.message, stage: r.stage, at } };
    case 'heartbeat':
      return null;
    default: {
      const never: never = r;
      return never;
    }
  }
}

export function createRunControl(store: Store, onChange: () => void): RunControl {
  // One message at a time per run: each reads the inbox, stages it with its message and waits for the
  // database before putting it in place, so two at once would both start from the same inbox and the
  // second rename would drop the first's message.
  const inTurn = oneAtATime();

  async function currentRun(task: Task): Promise<Run> {
    const runs = await store.runs.list({ taskId: task.id, status: 'running' });
    const run = runs[runs.length - 1];
    if (!run?.runDir) throw new MaestroError('ILLEGAL_TRANSITION', `Task ${task.id} is ${task.status} and has no run in flight to send this to.`);
    return run;
  }

  return {
    async inject(task, message, who) {
      const run = await currentRun(task);
      // Written first, put in place once recorded: a failure anywhere (a full disk) leaves neither.
      await inTurn(run.runDir!, () =>
        recordThen(stageInbox(run.runDir!, { type: 'instruction', text: message }), () =>
          store.events.append({ projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'task.inject', payload: { who, length: message.length } }),
        ),
      );
      onChange();
      return { runId: run.id };
    },

    async reply(task, answer, who) {
      const run = await currentRun(task);
      // The question as the ingestor took it (in one transaction with awaiting_input): reading the outbox for it was
      // the whole outbox on the event loop, and its tail would not do either (a worker waiting overnight heartbeats
      // every 2 s, 8 MiB in a day).
      const { events } = await store.events.list({ taskId: task.id, runId: run.id, type: 'run.clarify', order: 'newest', limit: 1 });
      const clarifyId = events[0]?.payload.clarifyId;
      if (typeof clarifyId !== 'string') throw new MaestroError('ILLEGAL_TRANSITION', `Run ${run.id} has asked no question.`);
      // The worker sees the answer only once the task has left awaiting_input: never an answer the status does not know.
      await inTurn(run.runDir!, () =>
        recordThen(stageInbox(run.runDir!, { type: 'reply', text: answer, replyTo: clarifyId }), () =>
          store.tasks.transition(task.id, run.kind === 'plan' ? 'planning' : 'executing', { from: 'awaiting_input', reason: `answered by ${who}`, traceId: run.traceId }),
        ),
      );
      onChange();
      return { runId: run.id };
    },

    async transcriptPath(runId) {
      const run = await store.runs.get(runId);
      return run.runDir ? join(run.runDir, TRANSCRIPT_FILE) : null;
    },

    async replay(taskId, after, maxBytes = OUTBOX_TAIL_BYTES) {
      // Without Last-Event-ID: the current run from its start. With one: the rest of
      // the run it names, then every later run of the task (the stream follows the task).
      const runs = (await store.runs.list({ taskId })).filter((r) => r.runDir);
      if (!runs.length) return { items: [], leftOut: [] };
      let from = runs.length - 1;
      let afterSeq = 0;
      if (after) {
        const [runId, seq] = after.split(':');
        const i = runs.findIndex((r) => r.id === runId);
        if (i >= 0 && Number.isFinite(Number(seq))) {
          from = i;
          afterSeq = Number(seq);
        }
      }
      // The newest run first, each reading the tail of what the later ones left of the bytes; a run they left none
      // is not opened (its size is from stat), all of it left out.
      const perRun: Replay[] = [];
      let budget = maxBytes;
      for (let i = runs.length - 1; i >= from; i--) {
        const tail = readOutboxTail(runs[i]!.runDir!, budget);
        budget -= Math.min(tail.size, budget);
        perRun.unshift(replayTail(taskId, runs[i]!.id, tail, i === from ? afterSeq : 0));
      }
      return { items: perRun.flatMap((r) => r.items), leftOut: perRun.flatMap((r) => r.leftOut) };
    },
  };
}

/**
 * A run's items after seq `since` in its outbox's tail, as the ingestor took them: a line out of the worker's
 * sequence (a stray write) was never streamed live either. A tail starts the series at its first record its
 * successor follows (not at a stray line). What comes before the tail, after `since`, is left out.
 */
function replayTail(taskId: string, runId: string, tail: { records: OutboxRecord[]; from: number }, since: number): Replay {
  const seqs = new OutboxSequence(tail.from === 0 ? 0 : seriesStart(tail.records) - 1);
  const items: StreamItem[] = [];
  for (const r of tail.records) {
    if (seqs.see(r.seq) !== 'next' || r.seq <= since) continue;
    const item = toStreamItem(taskId, r);
    if (item) items.push(item);
  }
  const cut = tail.from > 0 && (tail.records.length === 0 || seriesStart(tail.records) > since + 1);
  return { items, leftOut: cut ? [{ runId, bytes: tail.from, before: items[0]?.seq ?? null }] : [] };
}

/** Records (in the database), then puts the staged inbox in place; a failed record drops it. */
async function recordThen(staged: StagedFile, record: () => Promise<unknown>): Promise<void> {
  try {
    await record();
  } catch (err) {
    staged.discard();
    throw err;
  }
  staged.commit();
}
