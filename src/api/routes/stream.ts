/**
 * Live output of a task's current run over SSE, and its transcript.
 *
 * SSE ids are `<runId>:<seq>`. A client that reconnects with Last-Event-ID (or
 * ?lastEventId=) first gets what it missed, replayed from the run's outbox,
 * then the live items; the stream follows the task to its next run. The replay
 * reads at most OUTBOX_TAIL_BYTES of outboxes (1 MiB): a client further behind
 * gets first one `replay.truncated` event naming each run whose items it left out (the
 * run, the seq the replay starts at, the transcript that has them all; no SSE id),
 * then the newest items. A comment line every 15 s keeps proxies from closing an
 * idle stream.
 */
import { createReadStream, existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import type { StreamItem } from '../../lib/bus.js';
import { LineSplitter } from '../../lib/lines.js';
import type { ApiDeps } from '../deps.js';
import type { Replay } from '../../daemon/runControl.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { idParam, idQuery, queryInt, taskIdParam } from './schemas.js';
import { REPLAY_TRUNCATED, replayTruncatedData, streamData, transcriptLine, transcriptSearchResponse, type ReplayTruncatedData, type StreamData } from '../wire/responses.js';

const KEEPALIVE_MS = 15_000;
const MATCH_TEXT_CHARS = 2000;

/**
 * The lines of a transcript that contain `needle` (lower-case; matched case-insensitively), with their
 * 1-based numbers. Read in chunks through the one line splitter (src/lib/lines.ts): linear time, and a line
 * past its limit is never held whole (it matches on its head, or on the needle as written anywhere in it).
 */
async function grepLines(path: string, needle: string, limit: number): Promise<{ line: number; text: string }[]> {
  const matches: { line: number; text: string }[] = [];
  const clip = (text: string) => (text.length > MATCH_TEXT_CHARS ? `${text.slice(0, MATCH_TEXT_CHARS)}…` : text);
  const check = (line: number, text: string) => {
    if (matches.length < limit && text.toLowerCase().includes(needle)) matches.push({ line, text: clip(text) });
  };
  const splitter = new LineSplitter({ watch: [Buffer.from(needle)] });
  for await (const chunk of createReadStream(path)) {
    splitter.push(
      chunk as Buffer,
      (bytes) => check(splitter.lines, bytes.toString('utf8')),
      (o) => {
        const head = o.head.toString('utf8');
        if (matches.length < limit && (o.seen[0] || head.toLowerCase().includes(needle))) matches.push({ line: o.line, text: `${clip(head)} (a line of ${o.bytes} bytes, cut)` });
      },
    );
    if (matches.length >= limit) return matches;
  }
  const last = splitter.pending;
  if (last) check(splitter.lines + 1, last.toString('utf8'));
  return matches;
}

function sse(item: StreamItem): string {
  const data: StreamData = { runId: item.runId, seq: item.seq, ...item.data };
  return `id: ${item.id}\nevent: ${item.kind}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * What the replay left out, of every run, as one event (a client resuming in an old run would otherwise get one per
 * run): without an id, so a client's Last-Event-ID stays the last item's. Its own fields name the first run, as
 * they did when the event named one run only.
 */
function replayTruncated(taskId: string, leftOut: Replay['leftOut']): string {
  const runs = leftOut.map((gap) => ({
    runId: gap.runId,
    firstSeq: gap.before,
    unreadBytes: gap.bytes,
    transcript: `/api/tasks/${encodeURIComponent(taskId)}/transcript?runId=${encodeURIComponent(gap.runId)}`,
  }));
  const data: ReplayTruncatedData = { ...runs[0]!, runs };
  return `event: ${REPLAY_TRUNCATED}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function registerStreamRoutes(app: FastifyInstance, doc: OpenApiDoc, deps: ApiDeps): void {
  registerLiveStream(app, doc, deps);
  registerTranscript(app, doc, deps);
}

/** GET /api/tasks/:taskId/stream: the replay from Last-Event-ID, then the live items, with a keepalive. */
function registerLiveStream(app: FastifyInstance, doc: OpenApiDoc, { store, bus, control }: ApiDeps): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/api/tasks/:taskId/stream',
      summary: "SSE: tokens and phases of the task's current run (honours Last-Event-ID)",
      tags: ['stream'],
      params: taskIdParam,
      query: z.object({ lastEventId: z.string().max(300).optional(), token: z.string().optional() }).strict(),
      // Each SSE item: `id: <runId>:<seq>`, `event:` its kind (token, phase, clarify, result, error), `data:` streamData;
      // and, before the replayed items, one `event: replay.truncated` (no id) with replayTruncatedData when it left items out.
      content: { 'text/event-stream': z.union([streamData, replayTruncatedData]) },
    },
    async ({ params, query, req, reply }) => {
      await store.tasks.get(params.taskId);
      const header = req.headers['last-event-id'];
      const lastEventId = (Array.isArray(header) ? header[0] : header) ?? query.lastEventId ?? null;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-trace-id': String(reply.getHeader('x-trace-id') ?? ''),
      });
      res.write(': connected\n\n');
      // Buffer live items while the replay is read, then drop what the replay already sent.
      const pending: StreamItem[] = [];
      let replaying = true;
      const sent = new Set<string>();
      const send = (item: StreamItem) => {
        if (sent.has(item.id)) return;
        sent.add(item.id);
        if (sent.size > 10_000) sent.clear();
        res.write(sse(item));
      };
      const off = bus.onStream(params.taskId, (item) => (replaying ? pending.push(item) : send(item)));
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      const close = () => {
        off();
        clearInterval(keepalive);
      };
      req.raw.on('close', close);
      try {
        const replay = await control.replay(params.taskId, lastEventId);
        if (replay.leftOut.length) res.write(replayTruncated(params.taskId, replay.leftOut));
        for (const item of replay.items) send(item);
      } finally {
        replaying = false;
        for (const item of pending.splice(0)) send(item);
      }
    },
  );
}

/** GET /api/tasks/:id/transcript: the whole transcript as JSON lines, or the lines matching ?q=. */
function registerTranscript(app: FastifyInstance, doc: OpenApiDoc, { store, control }: ApiDeps): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/api/tasks/:id/transcript',
      summary: "The transcript of the task's latest run (or ?runId=), streamed as JSON lines; ?q= greps it on the server with line numbers",
      tags: ['stream'],
      params: idParam,
      query: z.object({ q: z.string().min(1).max(500).optional(), runId: idQuery.optional(), limit: queryInt(1, 10_000).default(1000) }).strict(),
      response: transcriptSearchResponse,
      content: { 'application/x-ndjson': transcriptLine },
    },
    async ({ params, query, reply }) => {
      await store.tasks.get(params.id);
      const runs = await store.runs.list({ taskId: params.id });
      const run = query.runId ? runs.find((r) => r.id === query.runId) : runs[runs.length - 1];
      // Another task's run (or none) would answer an empty transcript, as if this task's run had said nothing.
      if (query.runId && !run) throw new MaestroError('UNKNOWN_RUN', `Run ${query.runId} is not one of task ${params.id}'s runs; GET /api/tasks/${params.id} lists them.`, { details: { runId: query.runId, taskId: params.id } });
      if (!run) return query.q ? { matches: [] } : reply.type('application/x-ndjson').send('');
      reply.header('x-trace-id', run.traceId);
      const path = await control.transcriptPath(run.id);
      if (!path || !existsSync(path)) return query.q ? { runId: run.id, matches: [] } : reply.type('application/x-ndjson').send('');
      if (!query.q) return reply.type('application/x-ndjson').send(createReadStream(path));
      const matches = await grepLines(path, query.q.toLowerCase(), query.limit);
      return { runId: run.id, q: query.q, matches };
    },
  );
}
