/**
 * The ingestor and the worker's numbering: a stray outbox line with a wild seq (a corrupted write, a bug) is said
 * in the log with the file, its offset and its seq, and hides none of the worker's later records; a repeated line
 * is passed over, once; a daemon restarted on the saved position applies nothing twice. A real SQLite store, real
 * run folders, the worker's own OutboxWriter.
 */
import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../core/types.js';
import { OUTBOX_FILE, OUTBOX_READ_BYTES, OutboxWriter } from '../executor/protocol/outbox.js';
import { Bus, type StreamItem } from '../lib/bus.js';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { Ingestor } from './ingestor.js';
import { createRunControl } from './runControl.js';

const MINUTE = 60_000;
type IngestorPreFinal = ConstructorParameters<typeof Ingestor>[2]['preFinal'];
const OWNER = 'daemon-a';
const NO_USAGE = { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [], agentCalls: 0 };

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  removeTempDirs();
});

interface Setup {
  store: Store;
  run: Run;
  taskId: string;
  outbox: string;
  writer: () => OutboxWriter;
  /** A daemon's ingestor on the store; `logs` holds what it said. */
  ingestor: (bus?: Bus, preFinal?: IngestorPreFinal) => { ingestor: Ingestor; logs: Array<{ obj: Record<string, unknown>; msg: string }>; errors: Error[] };
}

async function setup(): Promise<Setup> {
  const { db } = await freshSqlite();
  const store = createStore(db);
  stores.push(store);
  const project = await store.projects.create({ name: 'p', repoPath: tempDir(), config: {} });
  const task = await store.tasks.create({ projectId: project.id, title: 'Numbered', complexity: 'easy' });
  await store.tasks.claim(task.id, OWNER, 10 * MINUTE);
  const runDir = tempDir('maestro-run-');
  const run = await store.runs.start({ taskId: task.id, kind: 'execute', model: null, traceId: 'tr-1', attempt: 1, runDir, owner: OWNER });
  const ingestor = (bus = new Bus(), preFinal?: IngestorPreFinal) => {
    const logs: Array<{ obj: Record<string, unknown>; msg: string }> = [];
    const errors: Error[] = [];
    const ingestor = new Ingestor(store, bus, {
      owner: OWNER, leaseMs: 10 * MINUTE, onChange: () => {}, onError: (e) => errors.push(e), onFinal: () => {},
      log: { info: (obj, msg) => logs.push({ obj, msg }) }, preFinal,
    });
    return { ingestor, logs, errors };
  };
  return { store, run, taskId: task.id, outbox: join(runDir, OUTBOX_FILE), writer: () => new OutboxWriter(runDir, { traceId: 'tr-1', runId: run.id }), ingestor };
}

/** Appends a line the worker did not write; returns its byte offset. */
function stray(outbox: string, record: Record<string, unknown>): number {
  const offset = statSync(outbox).size;
  appendFileSync(outbox, `${JSON.stringify({ traceId: 'tr-1', at: 1, ...record })}\n`);
  return offset;
}

const phases = async (s: Setup) => (await s.store.events.list({ taskId: s.taskId, type: 'run.phase' })).events.map((e) => `${e.payload.stage} ${e.payload.state}`);
const offSequence = (logs: Array<{ obj: Record<string, unknown>; msg: string }>) => logs.filter((l) => l.msg.startsWith('outbox records out of sequence'));
const needsAttention = { reason: 'check_failed', details: {} };

describe('Ingestor: the worker numbering its outbox records', () => {
  it('one stray line with a huge seq hides none of the later records: the run goes on and ends; the log names the run, the file, the offset and the seq', async () => {
    const s = await setup();
    const { ingestor, logs, errors } = s.ingestor();
    const w = s.writer();
    w.write({ type: 'phase', stage: 'agent', state: 'start' });
    const at = stray(s.outbox, { seq: 1_000_000, runId: s.run.id, type: 'heartbeat', pid: 1 });
    await ingestor.ingest(s.run);
    w.write({ type: 'phase', stage: 'agent', state: 'done' });
    w.write({ type: 'phase', stage: 'check:test', state: 'start' });
    await ingestor.ingest(s.run);
    expect(await phases(s)).toEqual(['agent start', 'agent done', 'check:test start']);
    w.write({ type: 'error', code: 'CHECK_FAILED', message: 'check test failed', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
    await ingestor.ingest(s.run);

    expect((await s.store.runs.get(s.run.id)).status).toBe('failed');
    expect((await s.store.tasks.get(s.taskId)).status).toBe('needs_attention');
    const said = offSequence(logs);
    expect(said).toHaveLength(1);
    expect(said[0]!.obj).toMatchObject({ runId: s.run.id, file: s.outbox, records: [{ offset: at, seq: 1_000_000, expected: 2, type: 'heartbeat', verdict: 'out_of_sequence' }] });
    expect(errors).toEqual([]);
  });

  it('a stray line says nothing in the run (no phase, no question); a worker restarted after it numbers on from its own records', async () => {
    const s = await setup();
    const { ingestor, logs } = s.ingestor();
    s.writer().write({ type: 'phase', stage: 'agent', state: 'start' });
    stray(s.outbox, { seq: 1_000_000, runId: s.run.id, type: 'phase', stage: 'stray', state: 'start' });
    stray(s.outbox, { seq: 1_000_002, runId: s.run.id, type: 'clarify', stage: 'agent', clarifyId: 'q-stray', question: 'Who wrote this?' });
    await ingestor.ingest(s.run); // the worker dies here; the daemon starts another on the same folder
    const again = s.writer();
    expect(again.write({ type: 'heartbeat', pid: 2 }).seq).toBe(2);
    again.write({ type: 'phase', stage: 'agent', state: 'done' });
    again.write({ type: 'error', code: 'CHECK_FAILED', message: 'failed', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
    await ingestor.ingest(s.run);
    expect(await phases(s)).toEqual(['agent start', 'agent done']);
    expect((await s.store.events.list({ taskId: s.taskId, type: 'run.clarify' })).events).toEqual([]);
    expect(await s.store.runs.get(s.run.id)).toMatchObject({ status: 'failed', error: 'CHECK_FAILED: failed' });
    expect(offSequence(logs).flatMap((l) => (l.obj.records as Array<{ seq: number }>).map((r) => r.seq))).toEqual([1_000_000, 1_000_002]);
  });

  it('a stray final record out of sequence settles no run; the worker\'s own final record does', async () => {
    const s = await setup();
    const { ingestor, logs } = s.ingestor();
    const w = s.writer();
    w.write({ type: 'phase', stage: 'agent', state: 'start' });
    const at = stray(s.outbox, { seq: 99_999, runId: s.run.id, type: 'result', kind: 'execute', usage: NO_USAGE, data: { forged: true } });
    await ingestor.ingest(s.run);
    expect((await s.store.runs.get(s.run.id)).status).toBe('running');
    w.write({ type: 'error', code: 'CHECK_FAILED', message: 'the real end', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
    await ingestor.ingest(s.run);
    expect(await s.store.runs.get(s.run.id)).toMatchObject({ status: 'failed', error: 'CHECK_FAILED: the real end' });
    expect(offSequence(logs)[0]!.obj.records).toEqual([{ offset: at, seq: 99_999, expected: 2, type: 'result', verdict: 'out_of_sequence' }]);
  });

  it('a line written twice is passed over once (one token streamed, one event), and a restarted daemon applies nothing again', async () => {
    const s = await setup();
    const bus = new Bus();
    const { ingestor, logs } = s.ingestor(bus);
    const streamed: StreamItem[] = [];
    bus.onStream(s.taskId, (item) => streamed.push(item));
    const w = s.writer();
    const phase = w.write({ type: 'phase', stage: 'agent', state: 'start' });
    const token = w.write({ type: 'token', stage: 'agent', text: 'hello' });
    const at = statSync(s.outbox).size;
    appendFileSync(s.outbox, `${JSON.stringify(token)}\n${JSON.stringify(phase)}\n`);
    w.write({ type: 'phase', stage: 'agent', state: 'done' });
    await ingestor.ingest(s.run);
    expect(streamed.filter((i) => i.kind === 'token').map((i) => i.data.text)).toEqual(['hello']);
    expect(await phases(s)).toEqual(['agent start', 'agent done']);
    expect(offSequence(logs)[0]!.obj.records).toEqual([
      { offset: at, seq: 2, expected: 3, type: 'token', verdict: 'repeat' },
      { offset: at + JSON.stringify(token).length + 1, seq: 1, expected: 3, type: 'phase', verdict: 'repeat' },
    ]);

    // A daemon restarted on the saved position (offset and seq): nothing is read twice, nothing said again.
    const restarted = s.ingestor();
    const saved = await s.store.runs.get(s.run.id);
    expect(saved).toMatchObject({ outboxOffset: statSync(s.outbox).size, outboxSeq: 3 });
    await restarted.ingestor.ingest(saved);
    w.write({ type: 'error', code: 'CHECK_FAILED', message: 'failed', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
    await restarted.ingestor.ingest(saved);
    expect(await phases(s)).toEqual(['agent start', 'agent done']);
    expect((await s.store.runs.get(s.run.id)).status).toBe('failed');
    expect(offSequence(restarted.logs)).toEqual([]);
  });

  it('a client resuming its stream is replayed what was streamed live: the worker\'s records, not the stray line', async () => {
    const s = await setup();
    const w = s.writer();
    w.write({ type: 'token', stage: 'agent', text: 'one ' });
    stray(s.outbox, { seq: 77, runId: s.run.id, type: 'token', stage: 'agent', text: 'stray ' });
    w.write({ type: 'token', stage: 'agent', text: 'two' });
    const live: StreamItem[] = [];
    const bus = new Bus();
    bus.onStream(s.taskId, (item) => live.push(item));
    await s.ingestor(bus).ingestor.ingest(s.run);
    const { items: replayed } = await createRunControl(s.store, () => {}).replay(s.taskId, null);
    expect(replayed.map((i) => i.data.text)).toEqual(['one ', 'two']);
    expect(replayed.map((i) => i.id)).toEqual(live.map((i) => i.id));
  });
});

describe('Ingestor: an outbox that grew by much at once', () => {
  it('is read a window at a time, within one ingest: every token streamed in order, then the final record settles the run', async () => {
    const s = await setup();
    const bus = new Bus();
    const { ingestor, errors } = s.ingestor(bus);
    const streamed: StreamItem[] = [];
    bus.onStream(s.taskId, (item) => streamed.push(item));
    const w = s.writer();
    const count = Math.ceil((2.5 * OUTBOX_READ_BYTES) / 60_000);
    for (let i = 0; i < count; i++) w.write({ type: 'token', stage: 'agent', text: `${i} ${'x'.repeat(60_000)}` });
    w.write({ type: 'error', code: 'CHECK_FAILED', message: 'the end', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
    await ingestor.ingest(s.run);
    expect(streamed.filter((i) => i.kind === 'token').map((i) => Number(String(i.data.text).split(' ')[0]))).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(await s.store.runs.get(s.run.id)).toMatchObject({ status: 'failed', error: 'CHECK_FAILED: the end' });
    expect((await s.store.runs.get(s.run.id)).outboxOffset).toBe(statSync(s.outbox).size);
    expect(errors).toEqual([]);
  });
});

describe('Ingestor.stop: a daemon shutting down', () => {
  it('waits for a final record still with its project hook, which then settles the run, instead of leaving the hook running past the stop', async () => {
    const s = await setup();
    let release!: () => void;
    const hookRunning = new Promise<void>((r) => (release = r));
    let hookAsked!: () => void;
    const asked = new Promise<void>((r) => (hookAsked = r));
    const { ingestor, errors } = s.ingestor(new Bus(), async (_run, record) => {
      hookAsked();
      await hookRunning;
      return record;
    });
    s.writer().write({ type: 'error', code: 'CHECK_FAILED', message: 'failed', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
    const ingesting = ingestor.ingest(s.run);
    await asked;
    let stopped = false;
    const stopping = ingestor.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    await ingesting;
    expect(errors).toEqual([]);
    expect((await s.store.runs.get(s.run.id)).status).toBe('failed');
  });
});

describe('Ingestor: what goes on after a run\'s outcome', () => {
  it('is said when it fails, not thrown: its rejection is no unhandled one (a daemon exited on it when PostgreSQL restarted)', async () => {
    const s = await setup();
    const errors: Error[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const ingestor = new Ingestor(s.store, new Bus(), {
        owner: OWNER, leaseMs: 10 * MINUTE, onChange: () => {}, onError: (e) => errors.push(e),
        onFinal: async () => {
          throw new Error('terminating connection due to administrator command');
        },
      });
      s.writer().write({ type: 'error', code: 'CHECK_FAILED', message: 'failed', stage: 'check:test', retryable: false, usage: NO_USAGE, needsAttention });
      await ingestor.ingest(s.run);
      await ingestor.stop();
      await new Promise((r) => setImmediate(r));
      expect(errors.map((e) => e.message)).toEqual(['terminating connection due to administrator command']);
      expect(unhandled).toEqual([]);
      expect((await s.store.runs.get(s.run.id)).status).toBe('failed');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
