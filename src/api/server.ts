/**
 * ApiServer: the Fastify app the board, the CLI and the MCP server talk to.
 * Built without listening (tests use `app.inject`), then `listen()`ed by the
 * daemon. Every request, SSE and WebSocket upgrades included, first passes
 * the guard (guard.ts: Host, Origin, token, content type); bodies are JSON
 * only, with a depth limit (json.ts).
 */
import { randomUUID } from 'node:crypto';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Project, Task } from '../core/types.js';
import type { Bus, StreamItem } from '../daemon/bus.js';
import type { Store } from '../store/store.js';
import { clientErrorHandler, frameworkErrors, installErrorHandler } from './errors.js';
import { installGuard, type GuardConfig } from './guard.js';
import { installJsonParser } from './json.js';
import { defineRoute, OpenApiDoc } from './route.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerAgentRoutes } from './routes/agents.js';
import { registerTaskRoutes } from './routes/tasks.js';
import { registerReadRoutes } from './routes/reads.js';
import { registerReviewRoutes } from './routes/review.js';
import { registerStreamRoutes } from './routes/stream.js';
import { registerWebSocket } from './routes/ws.js';
import { healthResponse, openApiResponse, type HealthResponse } from './wire/responses.js';

/** What the running daemon offers the API about live runs. */
export interface RunControl {
  /** Appends an instruction for the task's current run's next turn. */
  inject(task: Task, message: string, who: string): Promise<{ runId: string }>;
  /** Answers the clarifying question the task is waiting on. */
  reply(task: Task, answer: string, who: string): Promise<{ runId: string }>;
  /** The transcript file of a run, if it has one. */
  transcriptPath(runId: string): Promise<string | null>;
  /** Stream items of the task's current run after `after` (`<runId>:<seq>`), for SSE resumption. */
  replay(taskId: string, after: string | null): Promise<StreamItem[]>;
}

export interface ApiDeps {
  store: Store;
  bus: Bus;
  /** `token` null: no token asked (`maestro serve --no-auth`, loopback only). */
  config: GuardConfig;
  control: RunControl;
  logError: (err: Error) => void;
  /** The daemon's health conditions (a full disk, a read-only home) for GET /api/health. */
  health?: () => HealthResponse;
  /** The environment agent workers get (PATH, credentials): what GET /api/agents looks at. */
  agentEnv?: NodeJS.ProcessEnv;
  /**
   * Why a project's tasks could not run (no usable agent provider), or null.
   * Set by a daemon that runs tasks: creating a task there is refused with the fix.
   */
  providerProblem?: (project: Project) => string | null;
  /** The repository holding a project's task branches (a shared remote's: this host's clone); its repoPath when absent. */
  repoFor?: (project: Project) => string;
  /** Extra route plugins (knowledge, observer, the web board); `doc` lists their routes at /api/openapi.json. */
  plugins?: ((app: FastifyInstance, doc: OpenApiDoc) => Promise<void> | void)[];
}

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  // forceCloseConnections: SSE streams and upgraded sockets never end by themselves; stop() must not wait on them.
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024, forceCloseConnections: true, frameworkErrors, clientErrorHandler });
  const doc = new OpenApiDoc();
  doc.track(app);
  installErrorHandler(app, deps.logError);

  app.addHook('onRequest', async (_req, reply) => {
    // Every response carries a trace id: the run's when the route sets one, else the request's own.
    reply.header('x-trace-id', randomUUID());
    // No page may frame the board (its buttons approve and cancel), sniff our JSON as something else, or learn our URLs from a Referer.
    reply.header('x-frame-options', 'DENY').header('content-security-policy', "frame-ancestors 'none'").header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
  });
  installGuard(app, deps.config);
  installJsonParser(app);

  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  defineRoute(app, doc, { method: 'GET', url: '/api/health', summary: "The daemon's health: conditions (a full disk, a read-only home) that pause new work", tags: ['daemon'], response: healthResponse }, async () => deps.health?.() ?? { ok: true, conditions: [] });
  defineRoute(app, doc, { method: 'GET', url: '/api/openapi.json', summary: 'This document', tags: ['daemon'], response: openApiResponse }, async () => doc.document());
  registerProjectRoutes(app, doc, deps);
  registerTaskRoutes(app, doc, deps);
  registerReadRoutes(app, doc, deps);
  registerReviewRoutes(app, doc, deps);
  registerStreamRoutes(app, doc, deps);
  registerWebSocket(app, deps);
  registerAgentRoutes(app, doc, deps);
  for (const plugin of deps.plugins ?? []) await plugin(app, doc);
  return app;
}
