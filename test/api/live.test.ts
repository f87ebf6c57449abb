/**
 * The live interfaces over a real socket: SSE with Last-Event-ID, the
 * WebSocket feed, reply to a question, transcript grep, traces.
 */
import { cliFor } from '../cli/helpers.js';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { readInbox } from '../../src/executor/protocol/inbox.js';
import { ObserverEventEmitter } from '../../src/observer/events.js';
import { freshPostgres, pgAvailable, removeTempDirs } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

const SCRIPT = fileURLToPath(new URL('../daemon/fixtures/ask.yaml', import.meta.url));

interface SseEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** Reads an SSE stream until `stop` says so; returns the events. */
async function readSse(url: string, headers: Record<string, string>, stop: (e: SseEvent, all: SseEvent[]) => boolean): Promise<SseEvent[]> {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const events: SseEvent[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]));
        if (!fields.data) continue;
        const e = { id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) };
        events.push(e);
        if (stop(e, events)) return events;
      }
    }
  } finally {
    ac.abort();
  }
  return events;
}

describe('live API', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  // The daemon's observer publishes on this emitter (as its hub would for a bundle another process wrote).
  const observerEvents = new ObserverEventEmitter();

  async function setup(title: string, database?: string) {
    d = await startTestDaemon({ tickMs: 100, ...(database ? { database } : {}) }, { observerEvents });
    const repo = makeRepo();
    const project = await d.store.projects.create({ name: 'live', repoPath: repo, config: { provider: { kind: 'scripted', script: SCRIPT } } });
    const task = await d.store.tasks.create({ projectId: project.id, title, complexity: 'easy' });
    return { repo, project, task, daemon: d };
  }

  it('streams tokens over SSE and resumes from Last-Event-ID without repeats', async () => {
    const { task, daemon } = await setup('Stream me');
    const url = `${daemon.url}/api/tasks/${task.id}/stream`;
    daemon.orchestrator.kick();
    const first = await readSse(url, daemon.auth, (e) => e.event === 'token' && String(e.data.text).includes('first'));
    const last = first[first.length - 1]!;
    expect(last.id).toMatch(/^r_[0-9a-f]+:\d+$/);
    const rest = await readSse(url, { ...daemon.auth, 'last-event-id': last.id }, (e) => e.event === 'result');
    const text = rest.filter((e) => e.event === 'token').map((e) => e.data.text).join('');
    expect(text).toContain('second token');
    expect(text).toContain('third token');
    expect(text).not.toContain('first token');
    // Every id after the resume point is newer than it.
    const seq = Number(last.id.split(':')[1]);
    expect(rest.every((e) => Number(e.id.split(':')[1]) > seq)).toBe(true);
    // A client that last saw the run's first record gets the whole run replayed, then what followed.
    const execRunId = last.id.split(':')[0]!;
    const replay = await readSse(url, { ...daemon.auth, 'last-event-id': `${execRunId}:1` }, (e) => e.event === 'result');
    expect(replay.filter((e) => e.event === 'token').map((e) => e.data.text).join('')).toContain('first token second token');
    expect(replay[0]!.id.startsWith(execRunId)).toBe(true);

    // The transcript is searchable on the server, with line numbers.
    await until(daemon.bus, async () => (await daemon.store.tasks.get(task.id)).status === 'reviewing' || (await daemon.store.tasks.get(task.id)).status === 'exec_review', 'execute to end');
    const runs = await daemon.store.runs.list({ taskId: task.id });
    const grep = (await (await daemon.fetch(`/api/tasks/${task.id}/transcript?q=needle&runId=${runs[0]!.id}`)).json()) as { matches: { line: number; text: string }[] };
    expect(grep.matches!.length).toBeGreaterThan(0);
    expect(grep.matches[0]!.line).toBeGreaterThan(0);
    expect(grep.matches[0]!.text).toContain('needle');
    // A line past the reader's limit (64 MiB) is matched without being held whole; the lines after it keep their numbers.
    const transcript = join(runs[0]!.runDir!, 'transcript.jsonl');
    const lineCount = readFileSync(transcript, 'utf8').split('\n').filter(Boolean).length;
    const half = 'x'.repeat(33 * 1024 * 1024);
    appendFileSync(transcript, `{"huge":"${half}needle${half}"}\n{"after":"needle after"}\n`);
    const huge = (await (await daemon.fetch(`/api/tasks/${task.id}/transcript?q=needle&runId=${runs[0]!.id}`)).json()) as { matches: { line: number; text: string }[] };
    expect(huge.matches.slice(-2).map((m) => m.line)).toEqual([lineCount + 1, lineCount + 2]);
    expect(huge.matches.at(-2)!.text).toMatch(/a line of \d+ bytes, cut\)$/);
    expect(huge.matches.at(-1)!.text).toBe('{"after":"needle after"}');
    const full = await daemon.fetch(`/api/tasks/${task.id}/transcript?runId=${runs[0]!.id}`);
    expect(await full.text()).toContain('second token');
    // An outbox past the replay's bound (1 MiB): first an event saying what was left out, without an id, then the newest items.
    const execSeqs = replay.filter((e) => e.id.startsWith(`${execRunId}:`)).map((e) => Number(e.id.split(':')[1]));
    const lastSeq = Math.max(...execSeqs);
    const fill = Array.from({ length: 24 }, (_, i) => JSON.stringify({ type: 'token', stage: 'agent', text: `fill ${i} ${'z'.repeat(60_000)}`, seq: lastSeq + 1 + i, traceId: runs[0]!.traceId, runId: execRunId, at: 1 }));
    appendFileSync(join(runs[0]!.runDir!, 'outbox.ndjson'), fill.join('\n') + '\n');
    const cut = await readSse(url, { ...daemon.auth, 'last-event-id': `${execRunId}:1` }, (e) => e.event !== 'replay.truncated');
    const transcriptPath = `/api/tasks/${task.id}/transcript?runId=${execRunId}`;
    const gap = { runId: execRunId, firstSeq: expect.any(Number), unreadBytes: expect.any(Number), transcript: transcriptPath };
    expect(cut[0]).toEqual({ id: undefined, event: 'replay.truncated', data: { ...gap, runs: [gap] } });
    const firstSeq = cut[0]!.data.firstSeq as number;
    expect(firstSeq).toBeGreaterThan(lastSeq);
    expect(cut[0]!.data.unreadBytes).toBeGreaterThan(0);
    expect(cut.slice(1).map((e) => e.id)).toEqual([`${execRunId}:${firstSeq}`]);
    // The transcript it names has what was left out.
    const early = (await (await daemon.fetch(`${transcriptPath}&q=first%20token`)).json()) as { matches: unknown[] };
    expect(early.matches.length).toBeGreaterThan(0);
    // The trace of that run shows the task's chain.
    const trace = (await (await daemon.fetch(`/api/traces/${runs[0]!.traceId}`)).json()) as { chain: { run: { kind: string }; events: { type: string }[] }[] };
    expect(trace.chain[0]!.run.kind).toBe('execute');
    expect(trace.chain[0]!.events.some((e: { type: string }) => e.type === 'run.phase')).toBe(true);
  });

  // On PostgreSQL, where a write truly waits for the server, so that the messages interleave.
  if (!pgAvailable()) process.stderr.write(PG_MISSING);
  it.skipIf(!pgAvailable())('instructions sent at once all reach the run: none overwrites another in its inbox', async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const { task, daemon } = await setup('Ask for a name', url);
    daemon.orchestrator.kick();
    await until(daemon.bus, async () => (await daemon.store.tasks.get(task.id)).status === 'awaiting_input', 'the question');
    const sent = Array.from({ length: 12 }, (_, i) => `instruction ${i}`);
    const answers = await Promise.all(sent.map((message) => daemon.app.inject({ method: 'POST', url: `/api/tasks/${task.id}/inject`, payload: { message } })));
    expect(answers.map((a) => a.statusCode)).toEqual(sent.map(() => 202));
    const [run] = await daemon.store.runs.list({ taskId: task.id, status: 'running' });
    expect(readInbox(run!.runDir!).map((m) => m.text).sort()).toEqual([...sent].sort());
    expect((await daemon.store.events.list({ taskId: task.id, type: 'task.inject' })).events).toHaveLength(12);
  });

  it('pauses on a question, and a reply over the API resumes the run with the answer', async () => {
    const { task, repo, daemon } = await setup('Ask for a name');
    const ws = new WebSocket(daemon.wsUrl('/api/ws'));
    const seen: { type: string; event?: { type: string; taskId: string; payload: Record<string, unknown> } }[] = [];
    ws.on('message', (m) => seen.push(JSON.parse(String(m))));
    await new Promise((r) => ws.once('open', r));
    daemon.orchestrator.kick();
    await until(daemon.bus, async () => (await daemon.store.tasks.get(task.id)).status === 'awaiting_input', 'the question');
    // The question is in the task's detail (the board's answer box, `task show`), not only in the live output.
    const detail = (await (await daemon.fetch(`/api/tasks/${task.id}`)).json()) as { question: { text: string } | null };
    expect(detail.question).toMatchObject({ text: 'Which name should it print?' });
    const shown = await cliFor(daemon.config.home).cli(['task', 'show', task.id, '--url', daemon.url]);
    expect(shown.stdout).toContain(`The agent asks:\n  Which name should it print?\nAnswer with: maestro task reply ${task.id} "<your answer>"`);
    const res = await daemon.fetch(`/api/tasks/${task.id}/reply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Grace Hopper', who: 'ann' }) });
    expect(res.status).toBe(202);
    await until(daemon.bus, async () => (await daemon.store.tasks.get(task.id)).status === 'exec_review', 'exec_review');
    expect(((await (await daemon.fetch(`/api/tasks/${task.id}`)).json()) as { question: unknown }).question).toBeNull();
    await daemon.store.tasks.approve(task.id, 'exec_review', 'ann');
    daemon.orchestrator.kick();
    await until(daemon.bus, async () => (await daemon.store.tasks.get(task.id)).status === 'done', 'done');
    expect(readFileSync(join(repo, 'name.txt'), 'utf8')).toBe('Grace Hopper\n');
    // The board saw the status changes live, including the question.
    const wsStatuses = () => seen.filter((m) => m.type === 'event' && m.event!.type === 'task.status' && m.event!.taskId === task.id).map((m) => m.event!.payload.to);
    await until(daemon.bus, async () => wsStatuses().includes('done'), 'done over the WebSocket', 30_000);
    const statuses = seen.filter((m) => m.type === 'event' && m.event!.type === 'task.status' && m.event!.taskId === task.id).map((m) => m.event!.payload.to);
    expect(statuses).toEqual(expect.arrayContaining(['executing', 'awaiting_input', 'exec_review', 'done']));
    expect(seen.some((m) => m.event?.type === 'run.phase')).toBe(true);
    ws.send('not json');
    ws.send(JSON.stringify({ type: 'subscribe', projectId: 'p_other' }));
    await until(daemon.bus, async () => seen.some((m) => m.type === 'subscribed'), 'subscribed', 30_000);
    expect(seen.some((m) => m.type === 'error')).toBe(true);
    // Observer updates belong to no project: a client subscribed to one still gets them.
    observerEvents.emit('update', { type: 'session.updated', sessionId: 'obs-1', revision: 3, explorationCount: 2, runningExplorationId: null, at: 1 });
    await until(daemon.bus, async () => seen.some((m) => m.event?.type === 'observer.update'), 'the observer update over the WebSocket', 30_000);
    expect(seen.find((m) => m.event?.type === 'observer.update')!.event!.payload).toMatchObject({ type: 'session.updated', sessionId: 'obs-1', revision: 3 });
    ws.close();
  });
});

describe('auth beyond loopback', () => {
  it('refuses --no-auth on a non-loopback address, naming the address', async () => {
    await expect(startTestDaemon({ host: '0.0.0.0', noAuth: true })).rejects.toThrow(/Refusing --no-auth on 0\.0\.0\.0/);
    removeTempDirs();
  });

  it('answers 401 on every route, SSE and WebSocket included, without the token', async () => {
    const d = await startTestDaemon({ host: '0.0.0.0', token: 'secret-token-123' }, { noOrchestrator: true });
    try {
      const base = `http://127.0.0.1:${d.port}`;
      for (const path of ['/api/health', '/api/tasks', '/api/projects', '/api/openapi.json', '/api/tasks/x/stream', '/api/events', '/api/nothing']) {
        const res = await fetch(`${base}${path}`);
        expect([path, res.status]).toEqual([path, 401]);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
      }
      expect((await fetch(`${base}/api/tasks`, { headers: { authorization: 'Bearer wrong-token-000' } })).status).toBe(401);
      expect((await fetch(`${base}/api/tasks`, { headers: { authorization: 'Bearer secret-token-123' } })).status).toBe(200);
      const ws = new WebSocket(`ws://127.0.0.1:${d.port}/api/ws`);
      const code = await new Promise((resolve) => {
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode));
        ws.on('open', () => resolve('open'));
      });
      expect(code).toBe(401);
      ws.on('error', () => undefined);
      ws.terminate();
      const ok = new WebSocket(`ws://127.0.0.1:${d.port}/api/ws?token=secret-token-123`);
      await new Promise((resolve, reject) => {
        ok.on('open', resolve);
        ok.on('error', reject);
      });
      ok.close();
    } finally {
      await d.stop();
      removeTempDirs();
    }
  });
});
