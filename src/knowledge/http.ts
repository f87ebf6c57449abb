/**
 * The daemon's knowledge routes, as a Fastify plugin the API server registers:
 * `app.register(knowledgeRoutes, { pool })`.
 *
 *   GET /api/knowledge/search?q=…&type=&category=&tag=&workspace=&kg=&code=&includeDeprecated=&diversity=&limit=&readOnlyProbe=&root=&global=
 *   GET /api/knowledge/entries?type=&category=&keyword=&tag=&includeDeprecated=&root=
 *   GET /api/knowledge/entries/:id?includeDeprecated=&root=
 *   GET /api/knowledge/health?kind=spec|knowhow&root=
 *
 * Each also takes `projectId` instead of `root` when the daemon knows its projects.
 *
 * `root` names the project (workflow root); without it the pool's default.
 * With `projectRoot`, the review, promotion and audit routes of reviewHttp.ts
 * are registered too (they take a registered project's id, never a path).
 * Errors answer `{error: {code, message}}` with the catalogue status.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { MaestroError, coerceError } from '../core/errors.js';
import { parseSearchRequest, runSearch } from './params.js';
import type { KnowledgePool } from './pool.js';
import type { OpenApiDoc } from '../api/route.js';
import { registerReviewRoutes } from './reviewHttp.js';

export interface KnowledgeRouteOptions {
  pool: KnowledgePool;
  /** Maps or refuses a requested root (e.g. only registered projects); default: accept as given. */
  allowRoot?: (root: string | undefined) => string | undefined;
  /** A registered project's repository folder (throws UNKNOWN_PROJECT otherwise): enables the review/promote/audit routes. */
  projectRoot?: (projectId: string) => Promise<string>;
  /** The API's OpenAPI document, so those routes are listed at /api/openapi.json. */
  doc?: OpenApiDoc;
}

type Query = Record<string, string | undefined>;

export const knowledgeRoutes: FastifyPluginAsync<KnowledgeRouteOptions> = async (app: FastifyInstance, opts) => {
  // `projectId` (a registered project, when the daemon gives `projectRoot`) names the root without a path.
  const rootOf = async (q: Query): Promise<string | undefined> => {
    if (q.projectId !== undefined) {
      if (!opts.projectRoot) throw new MaestroError('BAD_INPUT', 'projectId is not accepted here (this server knows no projects); pass root.');
      if (q.root !== undefined) throw new MaestroError('BAD_INPUT', 'Pass projectId or root, not both.');
      return opts.projectRoot(q.projectId);
    }
    return opts.allowRoot ? opts.allowRoot(q.root) : q.root;
  };
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof MaestroError) return reply.status(err.status).send({ error: err.toJSON() });
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status < 500) return reply.status(status).send({ error: { code: 'BAD_INPUT', message: coerceError(err).message } });
    return reply.status(500).send({ error: { code: 'INTERNAL', message: 'Internal error' } });
  });
  app.get('/api/knowledge/search', async (req) => {
    const q = req.query as Query;
    const parsed = parseSearchRequest(q);
    return runSearch(opts.pool.get(await rootOf(q), q.global === 'true'), parsed);
  });
  app.get('/api/knowledge/entries', async (req) => {
    const q = req.query as Query;
    const k = opts.pool.get(await rootOf(q), q.global === 'true');
    const entries = k.list({ type: q.type, category: q.category, tag: q.tag, keyword: q.keyword, workspace: q.workspace, includeDeprecated: q.includeDeprecated === 'true' });
    return { count: entries.length, entries };
  });
  app.get('/api/knowledge/entries/:id', async (req) => {
    const q = req.query as Query;
    const { id } = req.params as { id: string };
    return opts.pool.get(await rootOf(q), q.global === 'true').load(id, { includeDeprecated: q.includeDeprecated === 'true' });
  });
  app.get('/api/knowledge/health', async (req) => {
    const q = req.query as Query;
    const kind = q.kind === 'spec' || q.kind === 'knowhow' ? q.kind : undefined;
    return opts.pool.get(await rootOf(q), q.global === 'true').health(kind);
  });
  if (opts.projectRoot) registerReviewRoutes(app, { projectRoot: opts.projectRoot, ...(opts.doc ? { doc: opts.doc } : {}) });
};
