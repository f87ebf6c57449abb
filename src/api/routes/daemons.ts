/**
 * POST /api/daemon/stop (`maestro stop`): the daemon stops as at its first SIGTERM. A state change, so POST only,
 * behind the guard like every write.
 *
 * GET /api/daemons: which daemons share this database and how their settings differ from this one's (the registry
 * of src/store/ops/daemons.ts). Live ones and those gone stale in the last day; a daemon that stopped cleanly took
 * its row away. Behind the same Host, Origin and token checks as every route (guard.ts): hosts, pids and homes are
 * the team's, not the network's.
 */
import { hostname } from 'node:os';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { settingsThatDiffer, type DaemonSettings } from '../../core/daemonSettings.js';
import { DAEMON_STALE_LEASES, type RegisteredDaemon } from '../../store/ops/daemons.js';
import type { ApiDeps, StopProgressView } from '../deps.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { daemonListResponse, daemonStopResponse, type DaemonEntry, type DaemonStop, type StopProgressLine } from '../wire/daemons.js';

/** How far back a stale daemon is still listed: one killed overnight shows in the morning. */
const LISTED_FOR_MS = 24 * 3600 * 1000;

export function registerDaemonRoutes(app: FastifyInstance, doc: OpenApiDoc, { store, self }: Pick<ApiDeps, 'store' | 'self'>): void {
  if (!self) return; // an API without a daemon behind it (some tests) has no registry entry to compare with
  defineRoute(app, doc, { method: 'GET', url: '/api/daemons', summary: "The daemons sharing this database: who, where, and the settings that differ from this daemon's", tags: ['daemons'], response: daemonListResponse }, async () => {
    const mine = store.clock();
    const { now, daemons } = await store.daemons.list(LISTED_FOR_MS);
    const clockSkewMs = store.db.dialect === 'postgres' ? mine - now : null;
    return { self: self.name, settings: self.settings, clockSkewMs, daemons: daemons.map((d) => entry(d, self)) };
  });
}

/** While nothing changes, the follow's line is said again this often: a client that gives up says what it last saw. */
const PROGRESS_EVERY_MS = 2_000;

export function registerStopRoute(app: FastifyInstance, doc: OpenApiDoc, { stop }: Pick<ApiDeps, 'stop'>): void {
  if (!stop) return;
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/api/daemon/stop',
      summary: 'Stop this daemon as one SIGTERM does: running stages get the grace period, finished results are applied, tasks between stages are released. With follow=true the answer goes on (JSON lines) until the hand-over is done',
      tags: ['daemon'],
      status: 202,
      query: z.object({ follow: z.enum(['true']).optional().describe('stream the stop as JSON lines: the DaemonStop, then its progress up to handed-over') }).strict(),
      response: daemonStopResponse,
    },
    async ({ query, reply }) => {
      const answer = { stopping: true as const, pid: process.pid, host: hostname(), home: stop.home, graceMs: stop.graceMs };
      if (query.follow && stop.progress) return follow(reply, answer, stop.progress, stop.request);
      // Once the answer is out: the stop would cut it off.
      reply.raw.once('finish', () => stop.request());
      return answer;
    },
  );
}

/**
 * The stop, followed: the DaemonStop line, then a StopProgressLine at each change (and every PROGRESS_EVERY_MS), the
 * last one handed-over. The daemon closes its port only once this answer has ended (StopProgress.hold).
 */
function follow(reply: FastifyReply, answer: DaemonStop, progress: StopProgressView, request: () => void): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(202, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', 'x-trace-id': String(reply.getHeader('x-trace-id') ?? '') });
  let settle = () => {};
  progress.hold(new Promise<void>((resolve) => (settle = resolve)));
  const say = (line: StopProgressLine) => {
    if (res.writableEnded) return;
    res.write(`${JSON.stringify(line)}\n`);
    if (line.phase === 'handed-over') res.end();
  };
  const off = progress.onChange(say);
  const every = setInterval(() => {
    const now = progress.now();
    if (now) say(now);
  }, PROGRESS_EVERY_MS);
  res.once('close', () => {
    off();
    clearInterval(every);
    settle();
  });
  res.write(`${JSON.stringify(answer)}\n`, () => request());
  // A second `maestro stop` while stopping: where this one stands now.
  const now = progress.now();
  if (now) say(now);
}

/** Ages by the registry's clock (the database's on PostgreSQL: store/ops/daemons.ts), never another host's heartbeat against this clock. */
function entry({ heardMsAgo, ...d }: RegisteredDaemon, self: { name: string; settings: DaemonSettings }): DaemonEntry {
  const leaseMs = d.settings?.leaseMs ?? self.settings.leaseMs;
  return {
    ...d,
    lastHeardMsAgo: heardMsAgo,
    state: heardMsAgo > DAEMON_STALE_LEASES * leaseMs ? 'stale' : 'live',
    self: d.name === self.name,
    differs: d.settings ? settingsThatDiffer(self.settings, d.settings) : [],
  };
}
