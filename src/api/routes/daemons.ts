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
import type { FastifyInstance } from 'fastify';
import { settingsThatDiffer, type DaemonSettings } from '../../core/daemonSettings.js';
import type { RegisteredDaemon } from '../../store/ops/daemons.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { daemonListResponse, daemonStopResponse, type DaemonEntry } from '../wire/daemons.js';

/** How far back a stale daemon is still listed: one killed overnight shows in the morning. */
const LISTED_FOR_MS = 24 * 3600 * 1000;
/** A daemon is stale after this many of its leases without a heartbeat, as registerDaemon frees its name. */
const STALE_LEASES = 3;

export function registerDaemonRoutes(app: FastifyInstance, doc: OpenApiDoc, { store, self }: Pick<ApiDeps, 'store' | 'self'>): void {
  if (!self) return; // an API without a daemon behind it (some tests) has no registry entry to compare with
  defineRoute(app, doc, { method: 'GET', url: '/api/daemons', summary: "The daemons sharing this database: who, where, and the settings that differ from this daemon's", tags: ['daemons'], response: daemonListResponse }, async () => {
    const mine = store.clock();
    const { now, daemons } = await store.daemons.list(LISTED_FOR_MS);
    const clockSkewMs = store.db.dialect === 'postgres' ? mine - now : null;
    return { self: self.name, settings: self.settings, clockSkewMs, daemons: daemons.map((d) => entry(d, self)) };
  });
}

export function registerStopRoute(app: FastifyInstance, doc: OpenApiDoc, { stop }: Pick<ApiDeps, 'stop'>): void {
  if (!stop) return;
  defineRoute(app, doc, { method: 'POST', url: '/api/daemon/stop', summary: 'Stop this daemon as one SIGTERM does: running stages get the grace period, finished results are applied, tasks between stages are released', tags: ['daemon'], status: 202, response: daemonStopResponse }, async ({ reply }) => {
    // Once the answer is out: the stop closes the server first, which would cut it off.
    reply.raw.once('finish', () => stop.request());
    return { stopping: true as const, pid: process.pid, host: hostname(), home: stop.home, graceMs: stop.graceMs };
  });
}

/** Ages by the registry's clock (the database's on PostgreSQL: store/ops/daemons.ts), never another host's heartbeat against this clock. */
function entry({ heardMsAgo, ...d }: RegisteredDaemon, self: { name: string; settings: DaemonSettings }): DaemonEntry {
  const leaseMs = d.settings?.leaseMs ?? self.settings.leaseMs;
  return {
    ...d,
    lastHeardMsAgo: heardMsAgo,
    state: heardMsAgo > STALE_LEASES * leaseMs ? 'stale' : 'live',
    self: d.name === self.name,
    differs: d.settings ? settingsThatDiffer(self.settings, d.settings) : [],
  };
}
