/**
 * The web app's read API over observer sessions (the daemon registers it):
 *   GET /api/observer/sessions      the workspace's sessions, newest first
 *   GET /api/observer/sessions/:id  one session as the UI shows it (restore
 *                                   view: the bundle only, no live search)
 * Live updates: the daemon forwards `observerEvents` ('update') to its WebSocket.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { MaestroError } from '../core/errors.js';
import { loadBundle } from './bundle/store.js';
import type { FlowGraph } from './bundle/types.js';
import { readSessionIndex } from './bundle/session-index.js';
import { buildSessionView, type SessionView } from './view.js';
import { wikiLayout } from './wiki/layout.js';

export interface ObserverRouteDeps {
  wikiRoot: string;
  workspaceRoot: string;
  now?: () => number;
}

export interface SessionSummary {
  sessionId: string;
  isLast: boolean;
  load: SessionView['load'];
  jsonlPath: string | null;
  jsonlMtime: number | null;
  bundleUpdatedAt: number | null;
  explorationCount: number;
  intent: SessionView['intent'];
}

const SESSION_ID = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';

function notFound(id: string, wikiRoot: string): MaestroError {
  return new MaestroError('UNKNOWN_SESSION', `No observer session "${id}" in ${wikiLayout(wikiRoot).sessions}.`);
}

export function listObserverSessions(deps: ObserverRouteDeps): SessionSummary[] {
  const layout = wikiLayout(deps.wikiRoot);
  const now = deps.now?.() ?? Date.now();
  const { index } = readSessionIndex(layout, deps.workspaceRoot, now);
  const ids = new Set(Object.keys(index.sessions));
  if (existsSync(layout.sessions)) {
    for (const d of readdirSync(layout.sessions, { withFileTypes: true })) if (d.isDirectory() && !d.name.startsWith('.') && existsSync(join(layout.sessions, d.name, 'bundle.json'))) ids.add(d.name);
  }
  const out: SessionSummary[] = [];
  for (const id of ids) {
    const load = loadBundle(layout, id, { workspaceRoot: deps.workspaceRoot });
    const b = load.bundle;
    out.push({
      sessionId: id,
      isLast: index.lastSessionId === id,
      load: { status: load.status, ...(load.reason ? { reason: load.reason } : {}) },
      jsonlPath: b?.meta.jsonlPath ?? null,
      jsonlMtime: b?.meta.jsonlMtime ?? index.sessions[id]?.jsonlMtime ?? null,
      bundleUpdatedAt: b?.meta.updatedAt ?? index.sessions[id]?.bundleUpdatedAt ?? null,
      explorationCount: b ? Object.keys(b.explorations).length : 0,
      intent: b?.session.intent ? { intentKey: b.session.intent.intentKey, nodeTitle: b.session.intent.nodeTitle, phase: b.session.intent.phase } : null,
    });
  }
  return out.sort((a, b) => (b.bundleUpdatedAt ?? 0) - (a.bundleUpdatedAt ?? 0) || a.sessionId.localeCompare(b.sessionId));
}

export type ObserverSessionResponse = (SessionView & { flow: FlowGraph | null }) | { sessionId: string; load: SessionView['load']; session: null };

export function getObserverSession(deps: ObserverRouteDeps, id: string): ObserverSessionResponse {
  const load = loadBundle(wikiLayout(deps.wikiRoot), id, { workspaceRoot: deps.workspaceRoot });
  if (load.reason === 'bundle_not_found') throw notFound(id, deps.wikiRoot);
  const status = { status: load.status, ...(load.reason ? { reason: load.reason } : {}), ...(load.detail ? { detail: load.detail } : {}) };
  if (!load.bundle) return { sessionId: id, load: status, session: null };
  // The web app draws the exploration graph too; it comes with the view.
  return { ...buildSessionView({ bundle: load.bundle, mode: 'restore', load: status, explorations: null, transcript: null }), flow: load.bundle.session.flow.flowGraph };
}

/** Registers the observer routes on a Fastify instance (call directly or through app.register). */
export async function observerRoutes(app: FastifyInstance, deps: ObserverRouteDeps): Promise<void> {
  app.get('/api/observer/sessions', async () => ({ sessions: listObserverSessions(deps) }));
  app.get<{ Params: { id: string } }>(
    '/api/observer/sessions/:id',
    { schema: { params: { type: 'object', properties: { id: { type: 'string', pattern: SESSION_ID } }, required: ['id'] } } },
    async (req, reply) => {
      try {
        return getObserverSession(deps, req.params.id);
      } catch (err) {
        if (err instanceof MaestroError) return reply.code(err.status).send({ error: err.toJSON() });
        throw err;
      }
    },
  );
}
