/**
 * RunControl on a large outbox: a stream's replay reads at most OUTBOX_TAIL_BYTES of it, and a reply none, on the
 * daemon's event loop, however long the agent printed. The bytes read are the process's own count (bytesReadBy);
 * a real SQLite store and a real run folder, filled with what an agent printing fast writes.
 */
import { appendFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../core/types.js';
import { OUTBOX_FILE, OUTBOX_TAIL_BYTES, OutboxWriter } from '../executor/protocol/outbox.js';
import { Bus } from '../lib/bus.js';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { Ingestor } from './ingestor.js';
import { createRunControl } from './runControl.js';

/**
 * Bytes this process read through read(2) and its kin while `fn` ran (Linux's /proc/self/io rchar), the outbox's
 * among them. Not a mock of node:fs: the suite runs files in shared workers (isolate: false), where a module another
 * file loaded first keeps the real one and a mock's count stays 0 (CI saw it). A little else is read (SQLite's pages,
 * the test runner's messages): the checks below allow 64 KiB for it, far below what one more outbox would add.
 */
async function bytesReadBy<T>(fn: () => Promise<T>): Promise<{ result: T; bytes: number }> {
  const rchar = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  const before = rchar();
  const result = await fn();
  return { result, bytes: rchar() - before };
}
const SLACK = 64 * 1024;

const MINUTE = 60_000;
const OWNER = 'daemon-a';
const TOKEN_TEXT = 60_000;

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  removeTempDirs();
});

/** A task executing its run, after `earlier` runs of it (each with a run folder, oldest first). */
async function setup(earlier = 0): Promise<{ store: Store; run: Run; taskId: string; runDir: string; writer: OutboxWriter; earlierRuns: Run[] }> {
  const { db } = await freshSqlite();
  const store = createStore(db);
  stores.push(store);
  const project = await store.projects.create({ name: 'p', repoPath: tempDir(), config: {} });
  const task = await store.tasks.create({ projectId: project.id, title: 'Talkative', complexity: 'easy' });
  const claimed = await store.tasks.claim(task.id, OWNER, 10 * MINUTE);
  await store.tasks.advance({ id: task.id, owner: OWNER, attempt: claimed!.attempt }, 'queued', 'executing');
  // Ids in the order made: runs started in the same millisecond are listed by id.
  const earlierRuns: Run[] = [];
  for (let i = 0; i < earlier; i++) earlierRuns.push(await store.runs.create({ id: `r_0${i}`, taskId: task.id, kind: 'execute', model: null, traceId: 'tr-1', attempt: 1, runDir: tempDir('maestro-run-'), owner: OWNER }));
  const runDir = tempDir('maestro-run-');
  const run = await store.runs.start({ id: 'r_1', taskId: task.id, kind: 'execute', model: null, traceId: 'tr-1', attempt: 1, runDir, owner: OWNER });
  return { store, run, taskId: task.id, runDir, writer: new OutboxWriter(runDir, { traceId: 'tr-1', runId: run.id }), earlierRuns };
}

/** `count` token records of 60 KB each, as the worker numbers them, appended in one write (quick to make). */
function printFast(runDir: string, run: Run, firstSeq: number, count: number): void {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify({ type: 'token', stage: 'agent', text: `${firstSeq + i} ${'x'.repeat(TOKEN_TEXT)}`, seq: firstSeq + i, traceId: 'tr-1', runId: run.id, at: 1 }));
  appendFileSync(join(runDir, OUTBOX_FILE), lines.join('\n') + '\n');
}

describe('RunControl on an outbox of 3 × OUTBOX_TAIL_BYTES', () => {
  it("replays the newest items within its bound, says what it left out, and a resumed client near the end gets the rest", async () => {
    const s = await setup();
    const count = Math.ceil((3 * OUTBOX_TAIL_BYTES) / TOKEN_TEXT);
    printFast(s.runDir, s.run, 1, count);
    const size = statSync(join(s.runDir, OUTBOX_FILE)).size;
    const control = createRunControl(s.store, () => {});

    const { result: fresh, bytes: freshBytes } = await bytesReadBy(() => control.replay(s.taskId, null));
    expect(freshBytes).toBeLessThanOrEqual(OUTBOX_TAIL_BYTES + SLACK);
    const seqs = fresh.items.map((i) => i.seq);
    expect(seqs.at(-1)).toBe(count);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => count - seqs.length + 1 + i));
    expect(seqs.length).toBeGreaterThan(OUTBOX_TAIL_BYTES / (TOKEN_TEXT + 200) - 2);
    expect(fresh.leftOut).toEqual([{ runId: s.run.id, before: seqs[0], bytes: expect.any(Number) }]);
    expect(fresh.leftOut[0]!.bytes).toBeGreaterThanOrEqual(size - OUTBOX_TAIL_BYTES);

    // Resuming a few records from the end: those records, nothing said left out.
    const { result: resumed, bytes: resumedBytes } = await bytesReadBy(() => control.replay(s.taskId, `${s.run.id}:${count - 3}`));
    expect(resumedBytes).toBeLessThanOrEqual(OUTBOX_TAIL_BYTES + SLACK);
    expect(resumed.items.map((i) => i.seq)).toEqual([count - 2, count - 1, count]);
    expect(resumed.leftOut).toEqual([]);

    // A small bound: the last record whole (a line cut by the window's start is never taken for one).
    const small = await control.replay(s.taskId, null, TOKEN_TEXT + 1000);
    expect(small.items.map((i) => i.seq)).toEqual([count]);
  });

  it("resumed in an older run, opens none of the runs the newest one's outbox left no bytes for", async () => {
    const s = await setup(3);
    // The older runs' outboxes cannot be read (a folder in each one's place): opening one fails the replay.
    for (const r of s.earlierRuns) mkdirSync(join(r.runDir!, OUTBOX_FILE));
    const count = Math.ceil((3 * OUTBOX_TAIL_BYTES) / TOKEN_TEXT);
    printFast(s.runDir, s.run, 1, count);
    const control = createRunControl(s.store, () => {});

    const replay = await control.replay(s.taskId, `${s.earlierRuns[0]!.id}:1`);
    expect(replay.items.every((i) => i.runId === s.run.id)).toBe(true);
    // Every earlier run is said left out, whole (after seq 1 for the first): the client knows to look at its transcript.
    const sizes = s.earlierRuns.map((r) => statSync(join(r.runDir!, OUTBOX_FILE)).size);
    expect(replay.leftOut).toEqual([
      ...s.earlierRuns.map((r, i) => ({ runId: r.id, before: null, bytes: sizes[i] })),
      { runId: s.run.id, before: replay.items[0]!.seq, bytes: expect.any(Number) },
    ]);
  });

  it('a reply answers the question the ingestor recorded, reading none of the outbox', async () => {
    const s = await setup();
    const count = Math.ceil((3 * OUTBOX_TAIL_BYTES) / TOKEN_TEXT);
    printFast(s.runDir, s.run, 1, count);
    const w = new OutboxWriter(s.runDir, { traceId: 'tr-1', runId: s.run.id });
    w.write({ type: 'clarify', stage: 'agent', clarifyId: 'q-1', question: 'Which way?' });
    w.write({ type: 'heartbeat', pid: 1 });
    const ingestor = new Ingestor(s.store, new Bus(), { owner: OWNER, leaseMs: 10 * MINUTE, onChange: () => {}, onError: (e) => { throw e; }, onFinal: () => {}, log: { info: () => {} } });
    await ingestor.ingest(s.run);
    const task = await s.store.tasks.get(s.taskId);
    expect(task.status).toBe('awaiting_input');

    const reply = await bytesReadBy(() => createRunControl(s.store, () => {}).reply(task, 'Left', 'ann'));
    expect(reply.result).toEqual({ runId: s.run.id });
    expect(reply.bytes).toBeLessThan(SLACK); // inbox.json, staged with the reply
    const inbox = JSON.parse(readFileSync(join(s.runDir, 'inbox.json'), 'utf8')) as unknown;
    expect(JSON.stringify(inbox)).toContain('"replyTo":"q-1"');
  });
});
