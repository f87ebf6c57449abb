import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../api/client.js';
import { followTask, streamRenderer } from './taskLogs.js';

let server: Server | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/**
 * A daemon answering `routes` (path → JSON body, or a function giving it each time; a string is sent as it is), 404
 * otherwise: ours, or one a --url points at.
 */
async function daemon(routes: Record<string, unknown>): Promise<ApiClient> {
  server = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    const body = typeof route === 'function' ? (route as () => unknown)() : route;
    if (body === undefined) return res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no such route' } }));
    // With the trace id every daemon answer carries: the client takes an answer without it as not a daemon's.
    res.writeHead(200, { 'content-type': typeof body === 'string' ? 'application/x-ndjson' : 'application/json', 'x-trace-id': 'trace-1' }).end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return new ApiClient({ url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, token: 'test-token-1' }, {});
}

describe('maestro task logs, in its own lines', () => {
  it('shows the control characters of a task id the daemon answered, instead of letting the terminal run them', async () => {
    // A colour (kept in an agent's log) and a clear-screen, in the id of the version a rejection made.
    const next = 'T2\u001b[31m\u001b[2J';
    const versions = [{ id: 'T1', version: 1 }, { id: next, version: 2 }];
    const client = await daemon({
      '/api/tasks/T1': { task: { id: 'T1', version: 1, status: 'superseded' }, versions },
      [`/api/tasks/${encodeURIComponent(next)}`]: { task: { id: next, version: 2, status: 'done' }, versions },
      [`/api/runs?${new URLSearchParams({ taskId: next, limit: '5000' })}`]: { runs: [] },
      [`/api/tasks/${encodeURIComponent(next)}/transcript`]: '',
    });
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    await followTask(client, 'T1', false);
    const out = written.join('');
    expect(out).not.toContain('\u001b');
    expect(out).toBe(
      '══ T1 (version 1) was rejected: following version 2 (T2\\u{1b}[31m\\u{1b}[2J) ══\n' +
      'No transcript yet for T2\\u{1b}[31m\\u{1b}[2J.\n',
    );
  });
});

describe('maestro task logs --follow, the agent\'s text', () => {
  it("indents every line the agent streams under Maestro's own, however its tokens are cut, and leaves its colours out", () => {
    const render = streamRenderer('t_1');
    let id = 0;
    const item = (event: string, data: Record<string, unknown>) => render({ id: String(++id), event, data: JSON.stringify(data) });
    const out = [
      item('phase', { stage: 'execute', state: 'started' }),
      item('token', { text: 'Reading the \u001b[8mhidden\u001b[0m' }),
      item('token', { text: ' parser.\n✓ run r_9 finished (execute)\n══ t_1 is done' }),
      item('token', { text: ' ══\n' }),
      item('token', { text: 'Done.' }),
      item('clarify', { question: 'Which prefix?\n── review: started ──' }),
      item('token', { text: 'more\u001b[2A' }),
      item('error', { code: 'AGENT_FAILED', message: 'it stopped:\n══ t_1 is done ══' }),
    ].join('');
    expect(out.split('\n')).toEqual([
      '',
      '── execute: started ──',
      '  Reading the hidden parser.',
      '  ✓ run r_9 finished (execute)',
      '  ══ t_1 is done ══',
      '  Done.',
      '? Which prefix?',
      '  ── review: started ──',
      '  (answer with: maestro task reply <id> "<answer>")',
      '  more\\u{1b}[2A',
      '! AGENT_FAILED: it stopped:',
      '  ══ t_1 is done ══',
      '',
    ]);
  });
});

describe('maestro task logs --follow, how a run ended', () => {
  it('says how the daemon recorded the run once it has, not that the worker finished: fenced out, it was cancelled', async () => {
    const sse = 'id: r_9:2\nevent: result\ndata: {"runId":"r_9","seq":2,"kind":"execute"}\n\n';
    let asked = 0;
    let streamed = 0;
    const client = await daemon({
      // Done once its run's end was asked about: following ends after the run's line, whatever that line says.
      '/api/tasks/T1': () => ({ task: { id: 'T1', version: 1, status: asked >= 1 ? 'done' : 'executing', lastRunError: null }, versions: [{ id: 'T1', version: 1 }] }),
      '/api/tasks/T1/stream': () => (streamed++ === 0 ? sse : ''),
      // The ingestor records the result a moment after a replay read it: running the first two times asked.
      '/api/runs/r_9': () => ({ run: { id: 'r_9', kind: 'execute', status: asked++ < 2 ? 'running' : 'cancelled', error: 'lost the claim on T1 (now b); result discarded' } }),
    });
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    await followTask(client, 'T1', false);
    expect(asked).toBe(3);
    expect(written.join('')).toBe('\n✗ run r_9 was cancelled (execute): lost the claim on T1 (now b); result discarded\n\n══ T1 is done ══\n');
  });
});

describe('maestro task logs --follow, what the replay left out', () => {
  it('says so in a line of its own, with the command that shows the whole run', async () => {
    // The daemon replays at most 1 MiB of outboxes: a follow started late gets the event, then the newest items.
    const sse = [
      'event: replay.truncated\ndata: {"runId":"r_9","firstSeq":4000,"unreadBytes":3000000,"transcript":"/api/tasks/T1/transcript?runId=r_9","runs":[{"runId":"r_9","firstSeq":4000,"unreadBytes":3000000,"transcript":"/api/tasks/T1/transcript?runId=r_9"}]}\n\n',
      'id: r_9:4000\nevent: token\ndata: {"runId":"r_9","seq":4000,"stage":"agent","text":"the newest output"}\n\n',
      'id: r_9:4001\nevent: result\ndata: {"runId":"r_9","seq":4001,"kind":"execute"}\n\n',
    ].join('');
    let looked = 0;
    const client = await daemon({
      '/api/tasks/T1': () => ({ task: { id: 'T1', version: 1, status: looked++ === 0 ? 'executing' : 'done', lastRunError: null }, versions: [{ id: 'T1', version: 1 }] }),
      '/api/tasks/T1/stream': sse,
      '/api/runs/r_9': { run: { id: 'r_9', kind: 'execute', status: 'succeeded', error: null } },
    });
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    await followTask(client, 'T1', false);
    expect(written.join('')).toBe(
      '\n… earlier output of run r_9 left out here, too long to replay; `maestro task logs T1 --run r_9` has it all\n' +
      '  the newest output\n' +
      '✓ run r_9 finished (execute)\n' +
      '\n' +
      '══ T1 is done ══\n',
    );
  });

  it('says once what a replay spanning several runs left out, with the command for each run', () => {
    const gap = (runId: string, firstSeq: number | null) => ({ runId, firstSeq, unreadBytes: 900000, transcript: `/api/tasks/T1/transcript?runId=${runId}` });
    const runs = [gap('r_1', null), gap('r_2', null), gap('r_3', 70)];
    const render = streamRenderer('T1');
    const out = [render({ id: null, event: 'replay.truncated', data: JSON.stringify({ ...runs[0], runs }) }), render({ id: 'r_3:70', event: 'token', data: '{"runId":"r_3","seq":70,"text":"newest"}' })].join('');
    expect(out).toBe('\n… earlier output of 3 runs (r_1, r_2, r_3) left out here, too long to replay; `maestro task logs T1 --run r_1`, `--run r_2` and `--run r_3` have it all\n  newest');
    // A daemon from before, one event a run without `runs`: each says its own run.
    expect(render({ id: null, event: 'replay.truncated', data: JSON.stringify(runs[1]) })).toBe('\n… earlier output of run r_2 left out here, too long to replay; `maestro task logs T1 --run r_2` has it all\n');
  });
});
