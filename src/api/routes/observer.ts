/**
 * The web app's read API over observer sessions (the daemon registers it):
 *   GET /api/observer/sessions      the workspace's sessions, newest first
 *   GET /api/observer/sessions/:id  one session as the UI shows it (restore
 *                                   view: the bundle only, no live search)
 *   GET  /api/observer/proposals              open curation proposals (and the last closed ones)
 *   POST /api/observer/proposals/:id/accept   the person applies it to its entry
 *   POST /api/observer/proposals/:id/dismiss  the person drops it; the entry is unchanged
 * (Kept beside the other observer routes for now; a later issue moves HTTP routes to src/api/routes.)
 * Live updates: the daemon forwards its ObserverService's updates ('update') to its WebSocket.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { MaestroError } from '../../core/errors.js';
import { loadBundle } from '../../observer/bundle/store.js';
import type { FlowGraph } from '../../observer/bundle/types.js';
import { readSessionIndex } from '../../observer/bundle/session-index.js';
import { buildSessionView, type SessionView } from '../../observer/view.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { acceptProposal, dismissProposal, listProposals, type Proposal } from '../../observer/curation/proposals.js';
import { resolveProjectSlug } from '../../observer/paths.js';

export interface ObserverRouteDeps {
  wikiRoot: string;
  workspaceRoot: string;
  /** The `proj:` slug an accepted proposal's entry keeps; default: from the workspace folder's name. */
  projectSlug?: string;
  now?: () => number;
}

/** How many closed proposals the board shows. */
const CLOSED_SHOWN = 20;

export interface ProposalsResponse {
  open: Proposal[];
  closed: Proposal[];
  problems: Array<{ file: string; reason: string }>;
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

const PROPOSAL_ID = '^P-[0-9TZ-]+-[A-Za-z0-9.-]{1,40}$';

function proposalRoutes(app: FastifyInstance, deps: ObserverRouteDeps): void {
  app.get('/api/observer/proposals', async (): Promise<ProposalsResponse> => {
    const { open, closed, problems } = listProposals(deps.wikiRoot);
    return { open, closed: closed.sort((a, b) => (b.closedAt ?? '').localeCompare(a.closedAt ?? '')).slice(0, CLOSED_SHOWN), problems };
  });
  const schema = {
    params: { type: 'object', properties: { id: { type: 'string', pattern: PROPOSAL_ID } }, required: ['id'] },
    body: { type: 'object', properties: { note: { type: 'string', maxLength: 2_000 } }, additionalProperties: false },
  };
  for (const decision of ['accept', 'dismiss'] as const) {
    app.post<{ Params: { id: string }; Body: { note?: string } | undefined }>(`/api/observer/proposals/:id/${decision}`, { schema }, async (req) => {
      const now = new Date(deps.now?.() ?? Date.now());
      const note = req.body?.note;
      if (decision === 'dismiss') return { proposal: dismissProposal(deps.wikiRoot, req.params.id, { now, ...(note ? { note } : {}) }) };
      const { proposal, entry } = acceptProposal(deps.wikiRoot, req.params.id, { projectSlug: deps.projectSlug ?? resolveProjectSlug({}, deps.workspaceRoot), now, ...(note ? { note } : {}) });
      return { proposal, entry: { id: entry.id, relativePath: entry.relativePath } };
    });
  }
}

/** Registers the observer routes on a Fastify instance (call directly or through app.register). */
export async function observerRoutes(app: FastifyInstance, deps: ObserverRouteDeps): Promise<void> {
  proposalRoutes(app, deps);
  app.get('/api/observer/sessions', async () => ({ sessions: listObserverSessions(deps) }));
  app.get<{ Params: { id: string } }>(
    '/api/observer/sessions/:id',
    { schema: { params: { type: 'object', properties: { id: { type: 'string', pattern: SESSION_ID } }, required: ['id'] } } },
    async (req) => getObserverSession(deps, req.params.id),
  );
}
