/**
 * The web app's read API over observer sessions (the daemon registers it):
 *   GET /api/observer/sessions      the workspace's sessions, newest first
 *   GET /api/observer/sessions/:id  one session as the UI shows it (restore
 *                                   view: the bundle only, no live search)
 *   GET  /api/observer/proposals              open curation proposals (and the last closed ones)
 *   POST /api/observer/proposals/:id/accept   the person applies it to its entry
 *   POST /api/observer/proposals/:id/dismiss  the person drops it; the entry is unchanged
 * Each declares its answer in src/api/wire/observer.ts (listed at /api/openapi.json).
 * Live updates: the daemon forwards its ObserverService's updates ('update') to its WebSocket.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { loadBundle } from '../../observer/bundle/store.js';
import { readSessionIndex } from '../../observer/bundle/session-index.js';
import { buildSessionView } from '../../observer/view.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { acceptProposal, dismissProposal, listProposals } from '../../observer/curation/proposals.js';
import { resolveProjectSlug } from '../../observer/paths.js';
import { defineRoute, OpenApiDoc } from '../route.js';
import { idString } from './schemas.js';
import * as wire from '../wire/observer.js';

export interface ObserverRouteDeps {
  wikiRoot: string;
  workspaceRoot: string;
  /** The `proj:` slug an accepted proposal's entry keeps; default: from the workspace folder's name. */
  projectSlug?: string;
  now?: () => number;
}

/** How many closed proposals the board shows. */
const CLOSED_SHOWN = 20;

const sessionParams = z.object({
  id: z
    .string()
    .max(128, { error: 'is too long; a session id is at most 128 characters.', abort: true })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be a session id (letters, digits, ".", "_" and "-", not starting with one of those three)'),
});

function notFound(id: string, wikiRoot: string): MaestroError {
  return new MaestroError('UNKNOWN_SESSION', `No observer session "${id}" in ${wikiLayout(wikiRoot).sessions}.`);
}

export function listObserverSessions(deps: ObserverRouteDeps): wire.SessionSummary[] {
  const layout = wikiLayout(deps.wikiRoot);
  const now = deps.now?.() ?? Date.now();
  const { index } = readSessionIndex(layout, deps.workspaceRoot, now);
  const ids = new Set(Object.keys(index.sessions));
  if (existsSync(layout.sessions)) {
    for (const d of readdirSync(layout.sessions, { withFileTypes: true })) if (d.isDirectory() && !d.name.startsWith('.') && existsSync(join(layout.sessions, d.name, 'bundle.json'))) ids.add(d.name);
  }
  const out: wire.SessionSummary[] = [];
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

export function getObserverSession(deps: ObserverRouteDeps, id: string): wire.ObserverSessionResponse {
  const load = loadBundle(wikiLayout(deps.wikiRoot), id, { workspaceRoot: deps.workspaceRoot });
  if (load.reason === 'bundle_not_found') throw notFound(id, deps.wikiRoot);
  const status = { status: load.status, ...(load.reason ? { reason: load.reason } : {}), ...(load.detail ? { detail: load.detail } : {}) };
  if (!load.bundle) return { sessionId: id, load: status, session: null };
  // The web app draws the exploration graph too; it comes with the view.
  return { ...buildSessionView({ bundle: load.bundle, mode: 'restore', load: status, explorations: null, transcript: null }), flow: load.bundle.session.flow.flowGraph };
}

const proposalParams = z.object({ id: idString.regex(/^P-[0-9TZ-]+-[A-Za-z0-9.-]{1,40}$/, 'must be a proposal id (P-<time>-<entry id>)') });
/** Strict, like every other body: a misspelt `nte` is a 400 naming it, not a decision taken without its note. */
const decisionBody = z.object({ note: z.string().max(2_000).optional() }).strict();

function proposalRoutes(app: FastifyInstance, deps: ObserverRouteDeps, doc: OpenApiDoc, tags: string[]): void {
  const now = () => new Date(deps.now?.() ?? Date.now());
  defineRoute(app, doc, { method: 'GET', url: '/api/observer/proposals', summary: 'Open curation proposals and the last closed ones', tags, response: wire.proposalsResponse }, async () => {
    const { open, closed, problems } = listProposals(deps.wikiRoot);
    return { open, closed: closed.sort((a, b) => (b.closedAt ?? '').localeCompare(a.closedAt ?? '')).slice(0, CLOSED_SHOWN), problems };
  });
  const decision = { tags, params: proposalParams, body: decisionBody } as const;
  defineRoute(app, doc, { method: 'POST', url: '/api/observer/proposals/:id/accept', summary: 'Apply a curation proposal to its wiki entry', ...decision, response: wire.proposalAcceptResponse }, async ({ params, body }) => {
    const { proposal, entry } = acceptProposal(deps.wikiRoot, params.id, { projectSlug: deps.projectSlug ?? resolveProjectSlug({}, deps.workspaceRoot), now: now(), ...(body.note ? { note: body.note } : {}) });
    return { proposal, entry: { id: entry.id, relativePath: entry.relativePath } };
  });
  defineRoute(app, doc, { method: 'POST', url: '/api/observer/proposals/:id/dismiss', summary: 'Drop a curation proposal; its entry is unchanged', ...decision, response: wire.proposalDismissResponse }, async ({ params, body }) => ({
    proposal: dismissProposal(deps.wikiRoot, params.id, { now: now(), ...(body.note ? { note: body.note } : {}) }),
  }));
}

/** Registers the observer routes on a Fastify instance (call directly or through app.register); `doc` lists them at /api/openapi.json. */
export async function observerRoutes(app: FastifyInstance, deps: ObserverRouteDeps, doc: OpenApiDoc = new OpenApiDoc()): Promise<void> {
  const tags = ['observer'];
  proposalRoutes(app, deps, doc, tags);
  defineRoute(app, doc, { method: 'GET', url: '/api/observer/sessions', summary: "The workspace's observer sessions, newest first", tags, response: wire.sessionListResponse }, async () => ({ sessions: listObserverSessions(deps) }));
  defineRoute(app, doc, { method: 'GET', url: '/api/observer/sessions/:id', summary: 'One observer session as the board shows it (the bundle only), with its exploration graph', tags, params: sessionParams, response: wire.observerSessionResponse }, async ({ params }) =>
    getObserverSession(deps, params.id),
  );
}
