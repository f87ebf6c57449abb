/**
 * ApiServer: the Fastify app the board, the CLI and the MCP server talk to.
 * Built without listening (tests use `app.inject`), then `listen()`ed by the
 * daemon. Every request, SSE and WebSocket upgrades included, first passes
 * the guard (guard.ts: Host, Origin, token, content type); bodies are JSON
 * only, with a depth limit and no lone UTF-16 surrogates (json.ts).
 */
import { randomUUID } from 'node:crypto';
import { maxHeaderSize } from 'node:http';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ApiDeps } from './deps.js';
import { clientErrorHandler, frameworkErrors, installErrorHandler } from './errors.js';
import { installGuard } from './guard.js';
import { installJsonParser } from './json.js';
import { defineRoute, OpenApiDoc } from './route.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerAgentRoutes } from './routes/agents.js';
import { registerTaskRoutes } from './routes/tasks.js';
import { registerReadRoutes } from './routes/reads.js';
import { registerDaemonRoutes, registerStopRoute } from './routes/daemons.js';
import { registerReviewRoutes } from './routes/review.js';
import { registerStreamRoutes } from './routes/stream.js';
import { registerWebSocket } from './routes/ws.js';
import { healthResponse, openApiResponse } from './wire/responses.js';

/** What the running daemon offers the API about live runs. */
export type { RunControl } from '../daemon/runControl.js';

export type { ApiDeps } from './deps.js';

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  // forceCloseConnections: SSE streams and upgraded sockets never end by themselves; stop() must not wait on them.
  // maxParamLength: Fastify's default (100) left a longer id unrouted (a 404 from the board's catch-all GET, a 414 otherwise);
  // no parameter can outgrow the request line Node takes (maxHeaderSize, 16 KiB), and each route's schema says its own limit (a 400).
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024, forceCloseConnections: true, frameworkErrors, clientErrorHandler, routerOptions: { maxParamLength: maxHeaderSize } });
  const doc = new OpenApiDoc();
  doc.track(app);
  installErrorHandler(app, deps.logError);

  app.addHook('onRequest', async (_req, reply) => {
    // Every response carries a trace id: the run's when the route sets one, else the request's own.
    // The CLI's client takes it as the mark of a Maestro daemon (client.ts DAEMON_MARK): keep it on every answer.
    reply.header('x-trace-id', randomUUID());
    // No page may frame the board (its buttons approve and cancel), sniff our JSON as something else, or learn our URLs from a Referer.
    // An API answer opened as a page loads nothing; the board's own page has its policy (web.ts boardPolicy).
    reply.header('x-frame-options', 'DENY').header('content-security-policy', "default-src 'none'; frame-ancestors 'none'").header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
  });
  installGuard(app, deps.config);
  installJsonParser(app);

  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  defineRoute(app, doc, { method: 'GET', url: '/api/health', summary: "The daemon's health: conditions (a full disk, a read-only home) that pause new work", tags: ['daemon'], response: healthResponse }, async () => deps.health?.() ?? { ok: true, conditions: [] });
  defineRoute(app, doc, { method: 'GET', url: '/api/openapi.json', summary: 'This document', tags: ['daemon'], response: openApiResponse }, async () => doc.document());
  registerProjectRoutes(app, doc, deps);
  registerTaskRoutes(app, doc, deps);
  registerReadRoutes(app, doc, deps);
  registerDaemonRoutes(app, doc, deps);
  registerStopRoute(app, doc, deps);
  registerReviewRoutes(app, doc, deps);
  registerStreamRoutes(app, doc, deps);
  registerWebSocket(app, deps);
  registerAgentRoutes(app, doc, deps);
  for (const plugin of deps.plugins ?? []) await plugin(app, doc);
  return app;
}
