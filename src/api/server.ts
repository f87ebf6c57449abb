/**
 * ApiServer: the Fastify app the board, the CLI and the MCP server talk to.
 * Built without listening (tests use `app.inject`), then `listen()`ed by the
 * daemon. Auth: bound to loopback it is open; bound anywhere else, every
 * route — SSE and WebSocket included — needs the token as
 * `Authorization: Bearer <token>` (or `?token=` for EventSource and WebSocket
 * clients, which cannot set headers).
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import type { MaestroConfig } from '../config/config.js';
import type { Project, Task } from '../core/types.js';
import type { Bus, StreamItem } from '../daemon/bus.js';
import type { Store } from '../store/store.js';
import { installErrorHandler } from './errors.js';
import { OpenApiDoc } from './route.js';
import { registerProjectRoutes } from './routes/projects.js';
import { registerTaskRoutes } from './routes/tasks.js';
import { registerReadRoutes } from './routes/reads.js';
import { registerReviewRoutes } from './routes/review.js';
import { registerStreamRoutes } from './routes/stream.js';
import { registerWebSocket } from './routes/ws.js';

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
  config: Pick<MaestroConfig, 'host' | 'token'>;
  control: RunControl;
  logError: (err: Error) => void;
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

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host);
}

function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  // forceCloseConnections: SSE streams and upgraded sockets never end by themselves; stop() must not wait on them.
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024, forceCloseConnections: true });
  const doc = new OpenApiDoc();
  installErrorHandler(app, deps.logError);

  const needsToken = !isLoopback(deps.config.host);
  app.addHook('onRequest', async (req, reply) => {
    // Every response carries a trace id: the run's when the route sets one, else the request's own.
    reply.header('x-trace-id', randomUUID());
    if (!needsToken) return;
    const header = req.headers.authorization;
    const fromHeader = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    const fromQuery = (req.query as Record<string, unknown> | undefined)?.token;
    const given = fromHeader ?? (typeof fromQuery === 'string' ? fromQuery : undefined);
    if (!deps.config.token || !given || !tokenMatches(given, deps.config.token)) {
      // A refused WebSocket upgrade keeps its socket outside the HTTP server's
      // bookkeeping; close it once the 401 is written, or it lingers forever.
      if (req.headers.upgrade) reply.raw.once('finish', () => req.raw.socket.destroy());
      return reply.code(401).header('connection', 'close').send({ error: { code: 'UNAUTHORIZED', message: 'This daemon is bound beyond loopback: send Authorization: Bearer <MAESTRO_TOKEN>.' } });
    }
  });

  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  app.get('/api/health', async () => ({ ok: true }));
  app.get('/api/openapi.json', async () => doc.document());
  registerProjectRoutes(app, doc, deps);
  registerTaskRoutes(app, doc, deps);
  registerReadRoutes(app, doc, deps);
  registerReviewRoutes(app, doc, deps);
  registerStreamRoutes(app, doc, deps);
  registerWebSocket(app, deps);
  for (const plugin of deps.plugins ?? []) await plugin(app, doc);
  return app;
}
