import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendInbox, readInbox } from './inbox.js';
import { stat } from 'node:fs/promises';
import { branchName, JOB_FILE, parseJob, readJob, writeJob, writeJobOffLoop, type JobInput } from './job.js';
import { OUTBOX_FILE, OUTBOX_READ_BYTES, OutboxWriter, readOutbox } from './outbox.js';
import { StageBook } from './stages.js';
import { appendTranscript, readTranscript, TRANSCRIPT_FILE } from './transcript.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-proto-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const job: JobInput = {
  schemaVersion: 1, runId: 'R1', taskId: 'T1', traceId: 'tr1', kind: 'execute',
  task: { title: 'Add greeting', complexity: 'hard' },
  project: { id: 'p', repoPath: '/repo', worktreeRoot: '/wt' },
  provider: { kind: 'scripted', script: '/s.yaml' },
};

describe('job.json', () => {
  it('fills defaults, derives the model tier from complexity, and round-trips', () => {
    const written = writeJob(dir, job);
    expect(written.model.tier).toBe('hard');
    expect(written.task.version).toBe(1);
    expect(written.project.baseBranch).toBe('main');
    expect(readJob(dir)).toEqual(written);
    expect(readdirSync(dir)).toEqual([JOB_FILE]); // no temp file left behind
    expect(branchName('T1', 3)).toBe('maestro/T1-v3');
  });

  it("the daemon's write is the same file, and lets the event loop run while it syncs (runStarter.ts)", async () => {
    await stat(dir); // from an I/O callback's turn: the immediate below runs before the loop polls for I/O again
    let turned = false;
    setImmediate(() => (turned = true));
    const written = await writeJobOffLoop(dir, job);
    expect(turned).toBe(true); // a write that blocked the loop would be done before the immediate
    expect(readJob(dir)).toEqual(written);
    expect(written).toEqual(parseJob(job));
    expect(readdirSync(dir)).toEqual([JOB_FILE]);
    await expect(writeJobOffLoop(dir, { ...job, kind: 'deploy' } as unknown as JobInput)).rejects.toThrow(/kind: /);
    expect(readJob(dir)).toEqual(written);
  });

  it('names every bad field and writes nothing', () => {
    const bad = { ...job, kind: 'deploy', task: { ...job.task, complexity: 'epic' } };
    expect(() => writeJob(dir, bad as JobInput)).toThrow(/kind: .*; task\.complexity: /);
    expect(readdirSync(dir)).toEqual([]);
    expect(() => parseJob({ ...job, taskId: 'a b/../c' })).toThrow(/taskId: task ids name branches/);
  });

  it("carries the daemon's word on socket scoping in the sandbox, and refuses one that is not a word it gives", () => {
    const box = { kind: 'bwrap', hide: [], readOnly: [], writable: [] };
    expect(parseJob({ ...job, sandbox: { ...box, sockets: { scoped: false, reason: 'EINVAL' } } }).sandbox?.sockets).toEqual({ scoped: false, reason: 'EINVAL' });
    expect(parseJob({ ...job, sandbox: box }).sandbox?.sockets).toBeUndefined();
    expect(() => parseJob({ ...job, sandbox: { ...box, sockets: { scoped: false } } })).toThrow(/sandbox\.sockets\.reason: /);
    expect(() => parseJob({ ...job, sandbox: { ...box, sockets: { scoped: 'yes' } } })).toThrow(/sandbox\.sockets\.scoped: /);
    expect(() => parseJob({ ...job, sandbox: { ...box, sockets: { scoped: true, reason: 'x' } } })).toThrow(/sandbox\.sockets: Unrecognized key/);
  });

  it("carries the sandbox's network mode, allow list and upstream proxy to the worker, and refuses a mode it does not know", () => {
    const box = { kind: 'bwrap', hide: [], readOnly: [], writable: [] };
    expect(parseJob({ ...job, sandbox: { ...box, network: { mode: 'proxied', allow: ['h:8443'] } } }).sandbox?.network).toEqual({ mode: 'proxied', allow: ['h:8443'] });
    expect(parseJob({ ...job, sandbox: box }).sandbox?.network).toBeUndefined();
    // The host's own proxy, which the worker's proxy goes through.
    const upstream = { https: 'http://proxy.corp:3128/', noProxy: ['.corp.example'] };
    expect(parseJob({ ...job, sandbox: { ...box, network: { mode: 'proxied', allow: [], upstream } } }).sandbox?.network).toEqual({ mode: 'proxied', allow: [], upstream });
    expect(() => parseJob({ ...job, sandbox: { ...box, network: { mode: 'open', allow: [] } } })).toThrow(/sandbox\.network\.mode: /);
  });

  it('refuses a heartbeat, poll or timeout longer than a Node timer holds, naming the field and the limit', () => {
    const tooLong = { ...job, heartbeatMs: 2 ** 31, inboxPollMs: 2 ** 31, limits: { agentTimeoutMs: 3e9 }, checks: [{ name: 't', command: 'true', timeoutMs: 3e9 }] };
    const limit = 'must be at most 2147483647 ms \\(about 24.8 days\\), the longest a Node timer holds';
    expect(() => parseJob(tooLong)).toThrow(new RegExp(['checks.0.timeoutMs', 'limits.agentTimeoutMs', 'heartbeatMs', 'inboxPollMs'].map((f) => `${f.replace(/\./g, '\\.')}: ${limit}`).join('; ')));
  });
});

describe('outbox.ndjson', () => {
  it('stamps seq, traceId and runId, and a second writer continues the sequence', () => {
    const a = new OutboxWriter(dir, { traceId: 'tr1', runId: 'R1' }, () => 1000);
    a.write({ type: 'heartbeat', pid: 1 });
    a.write({ type: 'token', stage: 'agent', text: 'hi' });
    const b = new OutboxWriter(dir, { traceId: 'tr1', runId: 'R1' });
    b.write({ type: 'phase', stage: 'agent', state: 'done' });
    const { records } = readOutbox(dir);
    expect(records.map((r) => [r.seq, r.type, r.traceId, r.runId])).toEqual([[1, 'heartbeat', 'tr1', 'R1'], [2, 'token', 'tr1', 'R1'], [3, 'phase', 'tr1', 'R1']]);
    expect(records[0]!.at).toBe(1000);
  });

  it('leaves a torn last line for the next read and resumes from the offset', () => {
    const w = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    w.write({ type: 'token', stage: 's', text: 'one' });
    appendFileSync(join(dir, OUTBOX_FILE), '{"seq":2,"traceId":"t","runId":"r","at":5,"type":"tok');
    const first = readOutbox(dir);
    expect(first.records.map((r) => r.seq)).toEqual([1]);
    // The writer finishes the line (in real life: the rest of the same write).
    appendFileSync(join(dir, OUTBOX_FILE), 'en","stage":"s","text":"two"}\n');
    const second = readOutbox(dir, first.nextOffset);
    expect(second.records).toEqual([{ seq: 2, traceId: 't', runId: 'r', at: 5, type: 'token', stage: 's', text: 'two' }]);
    expect(readOutbox(dir, second.nextOffset).records).toEqual([]);
  });

  // The daemon's ingestor reads what is new in one go on its event loop: an agent printing fast (a command
  // provider's output becomes token records) had 180 MB read and parsed in one turn, 1 s, and its memory twice over.
  it('reads at most OUTBOX_READ_BYTES (and the line it is in) at a time, saying there is more, until the end', () => {
    const w = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    const text = 'x'.repeat(60_000);
    const count = Math.ceil((3 * OUTBOX_READ_BYTES) / text.length);
    for (let i = 0; i < count; i++) w.write({ type: 'token', stage: 's', text });
    appendFileSync(join(dir, OUTBOX_FILE), '{"seq":'); // a torn last line: never "more"
    const seen: number[] = [];
    let offset = 0;
    let reads = 0;
    for (;;) {
      const read = readOutbox(dir, offset);
      reads++;
      expect(read.nextOffset - offset).toBeLessThanOrEqual(OUTBOX_READ_BYTES + 2 * 1024 * 1024);
      seen.push(...read.records.map((r) => r.seq));
      offset = read.nextOffset;
      if (!read.more) break;
    }
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(readOutbox(dir, offset)).toMatchObject({ records: [], more: false, nextOffset: offset });
  });

  it('a line that is JSON but no record is passed over and reported with its line number, the records around it kept', () => {
    const w = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    w.write({ type: 'heartbeat', pid: 1 });
    appendFileSync(join(dir, OUTBOX_FILE), 'null\n{"seq":"2","type":"heartbeat","traceId":"t","runId":"r","at":1,"pid":1}\n');
    w.write({ type: 'token', stage: 's', text: 'after' });
    const read = readOutbox(dir);
    expect(read.records.map((r) => r.type)).toEqual(['heartbeat', 'token']);
    expect(read.corrupt).toEqual([
      { line: 2, text: 'null', problem: expect.stringContaining('expected object') },
      { line: 3, text: expect.stringContaining('"seq":"2"'), problem: expect.stringContaining('seq') },
    ]);
  });

  it('a restarted writer after a crash mid-line numbers on from the last whole record', () => {
    const w = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    w.write({ type: 'heartbeat', pid: 1 });
    appendFileSync(join(dir, OUTBOX_FILE), '{"seq":2,"ty'); // killed here
    const again = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    expect(again.write({ type: 'heartbeat', pid: 2 }).seq).toBe(2);
    // The fragment is gone, not glued to the new record.
    const all = readJsonLinesRaw();
    expect(all).toEqual([expect.objectContaining({ seq: 1, pid: 1 }), expect.objectContaining({ seq: 2, pid: 2 })]);
  });

  it('a restarted writer numbers on from its own records: a stray line with a huge or a fractional seq does not carry it off', () => {
    const w = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    w.write({ type: 'heartbeat', pid: 1 });
    appendFileSync(join(dir, OUTBOX_FILE), '{"seq":1000000,"traceId":"t","runId":"r","at":1,"type":"heartbeat","pid":9}\n');
    w.write({ type: 'heartbeat', pid: 1 });
    appendFileSync(join(dir, OUTBOX_FILE), '{"seq":2.5,"traceId":"t","runId":"r","at":1,"type":"heartbeat","pid":9}\n');
    const again = new OutboxWriter(dir, { traceId: 't', runId: 'r' });
    again.write({ type: 'heartbeat', pid: 2 });
    const read = readOutbox(dir);
    expect(read.records.map((r) => r.seq)).toEqual([1, 1000000, 2, 3]);
    expect(read.corrupt).toEqual([{ line: 4, text: expect.stringContaining('"seq":2.5'), problem: expect.stringContaining('seq') }]);
    // Nor does a stray last line: a number with no safe successor, here (going on after it, every record would be refused).
    appendFileSync(join(dir, OUTBOX_FILE), `${JSON.stringify({ seq: Number.MAX_SAFE_INTEGER, traceId: 't', runId: 'r', at: 1, type: 'heartbeat', pid: 9 })}\n`);
    expect(new OutboxWriter(dir, { traceId: 't', runId: 'r' }).write({ type: 'heartbeat', pid: 3 }).seq).toBe(4);
    expect(readOutbox(dir).records.map((r) => r.seq)).toEqual([1, 1000000, 2, 3, Number.MAX_SAFE_INTEGER, 4]);
  });
});

function readJsonLinesRaw(): unknown[] {
  return readFileSync(join(dir, OUTBOX_FILE), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

describe('inbox.json, stages.json, transcript.jsonl', () => {
  it('inbox messages are consumed once, and stages survive a new book on the same dir', () => {
    const m = appendInbox(dir, { type: 'instruction', text: 'use tabs' });
    appendInbox(dir, { type: 'reply', text: 'hola', replyTo: 'q1' });
    expect(readInbox(dir).map((x) => x.text)).toEqual(['use tabs', 'hola']);
    const book = new StageBook(dir);
    book.markDone('worktree', { path: '/wt/T1-v1' });
    book.consume(m.id);
    const reopened = new StageBook(dir);
    expect(reopened.isDone('worktree')).toBe(true);
    expect(reopened.output<{ path: string }>('worktree').path).toBe('/wt/T1-v1');
    expect(reopened.isConsumed(m.id)).toBe(true);
    expect(reopened.isDone('agent')).toBe(false);
  });

  it('instructions are kept with their stage across a new book, and a call with nothing new writes nothing', () => {
    const book = new StageBook(dir);
    expect(book.takeInstructions('agent', [])).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    const m = appendInbox(dir, { type: 'instruction', text: 'use tabs' });
    expect(book.takeInstructions('agent', [m, m])).toEqual(['use tabs']);
    // Laid out anew by hand: a write would put it back in the writer's layout.
    const handLaid = JSON.stringify(JSON.parse(readFileSync(join(dir, 'stages.json'), 'utf8')), null, 7);
    writeFileSync(join(dir, 'stages.json'), handLaid);
    expect(book.takeInstructions('agent', [m])).toEqual(['use tabs']);
    book.consume(m.id);
    expect(readFileSync(join(dir, 'stages.json'), 'utf8')).toBe(handLaid);
    expect(new StageBook(dir).takeInstructions('agent', [])).toEqual(['use tabs']);
  });

  it('transcript reads tolerate a torn last line', () => {
    appendTranscript(dir, { at: 1, stage: 'agent', role: 'agent', text: 'hello' });
    appendFileSync(join(dir, TRANSCRIPT_FILE), '{"at":2,"st');
    expect(readTranscript(dir).entries.map((e) => e.text)).toEqual(['hello']);
  });

  it('a corrupt inbox is an error that names the file', () => {
    writeFileSync(join(dir, 'inbox.json'), '{"messages":[{"id":1}]}');
    expect(() => readInbox(dir)).toThrow(/inbox\.json: messages\.0\./);
  });
});
