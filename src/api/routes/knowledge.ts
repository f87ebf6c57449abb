/**
 * The daemon's knowledge routes, as a Fastify plugin the API server registers:
 * `app.register(knowledgeRoutes, { pool })`.
 *
 *   GET /api/knowledge/search?q=…&type=&category=&tag=&workspace=&kg=&code=&includeDeprecated=&diversity=&limit=&readOnlyProbe=&allProjects=&root=&global=&fresh=
 *   GET /api/knowledge/entries?type=&category=&keyword=&tag=&workspace=&includeDeprecated=&root=&global=
 *   GET /api/knowledge/entries/:id?includeDeprecated=&root=&global=
 *   GET /api/knowledge/health?kind=spec|knowhow|wiki&root=&global=
 *
 * Each takes these keys only: another (a misspelt `limt`) is a 400 naming it.
 *
 * `root` names the project (workflow root); without it the pool's default.
 * With `projectRoot` (the daemon), each also takes `projectId`, a registered
 * project, instead of a path; and the review, promotion and audit routes of
 * knowledgeReview.ts are registered too (they take a project id, never a path).
 * Errors are thrown; the API's one error handler (src/api/errors.ts) answers them.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { CONTROL, parseInput } from '../../core/schemas.js';
import { KNOWHOW_TYPES } from '../../knowledge/format/knowhowParser.js';
import { ENTRY_TYPES } from '../../knowledge/format/wiki/layout.js';
import { parseSearchRequest, runSearch } from '../../knowledge/search/params.js';
import type { LifecycleContext } from '../../knowledge/lifecycle/context.js';
import type { KnowledgePool } from '../../knowledge/pool.js';
import { defineRoute, OpenApiDoc } from '../route.js';
import { entryListResponse, entryLoadResponse, knowledgeHealthResponse, knowledgeSearchResponse } from '../wire/knowledge.js';
import { registerReviewRoutes, type ReviewRouteOptions } from './knowledgeReview.js';
import { queryDigits, queryFlag } from './schemas.js';

export interface KnowledgeRouteOptions {
  pool: KnowledgePool;
  /**
   * Maps or refuses a requested root (the daemon: only registered projects, PATH_OUTSIDE_PROJECTS otherwise);
   * default: accept as given (a one-process server such as the tests').
   */
  confineRoot?: (root: string | undefined) => Promise<string>;
  /** A registered project's repository folder (throws UNKNOWN_PROJECT otherwise): enables `projectId` and the review/promote/audit routes. */
  projectRoot?: (projectId: string) => Promise<string>;
  /** What the store says of a task version a person replaced (see ReviewRouteOptions). */
  supersededOf?: ReviewRouteOptions['supersededOf'];
  beforeReview?: ReviewRouteOptions['beforeReview'];
  /** Where a promotion runs for a project on a shared remote (see ReviewRouteOptions). */
  promoteCommitted?: ReviewRouteOptions['promoteCommitted'];
  /** What the review/promote/audit routes keep between calls: the KnowledgeService's lifecycle context (needed with `projectRoot`). */
  lifecycle?: LifecycleContext;
  /** The environment the review/promote/audit routes resolve a project's root with: the KnowledgeService's (needed with `projectRoot`). */
  env?: NodeJS.ProcessEnv;
  /** The API's OpenAPI document, so these routes are listed at /api/openapi.json. */
  doc?: OpenApiDoc;
}

const READ_ROUTES = new Set(['/api/knowledge/search', '/api/knowledge/entries', '/api/knowledge/entries/:id', '/api/knowledge/health']);

type Query = Record<string, string | undefined>;

/**
 * The filter a `type` names (src/knowledge/index/query.ts): an entry kind, a knowhow type (FORMATS §2.1) or a wiki
 * entry type; the search also takes the code graph's (`code`, `codegraph`). `type=banana` matched nothing and
 * answered an empty list, as if the project had no such entries.
 */
const ENTRY_TYPE_FILTERS = ['spec', 'knowhow', 'wiki', ...KNOWHOW_TYPES, ...ENTRY_TYPES];
const typeFilter = (types: readonly string[]) =>
  z.string().refine((t) => types.includes(t), { error: (issue) => `"${String(issue.input).slice(0, 50)}" is no knowledge type; give one of ${types.join(', ')}` });
/**
 * Free words of a filter: one line. A category is not a closed list: specs have theirs (VALID_CATEGORIES), but a
 * knowhow document's `category:` is its author's word (`release`) and a wiki entry's is its intent key or folder.
 */
const filterWord = z.string().max(200).refine((v) => !CONTROL.test(v), 'must be one line without control characters (NUL, line breaks, tabs, escapes)');

/**
 * Each route's query, strict: a misspelt key (`limt=5`) is a 400 naming it, not a filter silently dropped. Flags
 * are read as every route reads a flag (queryFlag: `banana` is a 400, not false), the search's limit as digits (its
 * range is parseSearchRequest's). `projectId` has become `root` by the time these run (the preHandler below).
 */
const rootQuery = z.object({ root: z.string().optional(), projectId: z.string().optional(), global: queryFlag });
const healthQuery = rootQuery.extend({ kind: z.string().optional() }).strict();
const loadQuery = rootQuery.extend({ includeDeprecated: queryFlag }).strict();
const filters = { category: filterWord.optional(), tag: filterWord.optional(), workspace: filterWord.optional(), includeDeprecated: queryFlag };
const entryQuery = rootQuery.extend({ ...filters, type: typeFilter(ENTRY_TYPE_FILTERS).optional(), keyword: filterWord.optional() }).strict();
const searchQuery = rootQuery
  .extend({
    ...filters,
    q: z.string().optional(),
    type: typeFilter([...ENTRY_TYPE_FILTERS, 'code', 'codegraph']).optional(),
    diversity: z.string().optional(),
    fresh: queryFlag,
    kg: queryFlag,
    code: queryFlag,
    readOnlyProbe: queryFlag,
    allProjects: queryFlag,
    limit: queryDigits.optional(),
  })
  .strict();

export const knowledgeRoutes: FastifyPluginAsync<KnowledgeRouteOptions> = async (app: FastifyInstance, opts) => {
  const rootOf = (q: Query) => q.root;
  // `projectId` on a read route becomes that project's root before the handler runs.
  // A `root` is confined to what the server allows before any folder is read.
  app.addHook('preHandler', async (req) => {
    const q = req.query as Query;
    if (!READ_ROUTES.has(req.routeOptions.url ?? '')) return;
    // These routes have no query schema: a key given twice (?root=a&root=b) arrives as an array.
    for (const [key, value] of Object.entries(q)) {
      if (Array.isArray(value)) throw new MaestroError('BAD_INPUT', `The query parameter ${key} is given ${value.length} times; give it once.`);
    }
    if (q.projectId !== undefined) {
      if (!opts.projectRoot) throw new MaestroError('BAD_INPUT', 'projectId is not accepted here (this server knows no projects); pass root.');
      if (q.root !== undefined) throw new MaestroError('BAD_INPUT', 'Pass projectId or root, not both.');
      q.root = await opts.projectRoot(q.projectId);
      delete q.projectId;
    } else if (opts.confineRoot) {
      q.root = await opts.confineRoot(q.root);
    }
  });
  const doc = opts.doc ?? new OpenApiDoc();
  const tags = ['knowledge'];
  // No query schema in the spec: the preHandler above, each handler's query (entryQuery, searchQuery…) and parseSearchRequest (shared with the CLI) check these queries.
  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/search', summary: 'Search specs, knowhow and wiki entries (kg=true: the knowledge graph; code=true: the code graph)', tags, response: knowledgeSearchResponse }, async ({ query }) => {
    const q = query as Query;
    const flags = parseInput(searchQuery, q, 'query');
    const parsed = parseSearchRequest(q);
    const k = opts.pool.get(rootOf(q), flags.global);
    // `fresh=true` (the CLI): re-check the files now, not at most once a second, so the answer is the one a search in process gives.
    // The run ledgers only for the graph (kg): their walk grows with every run the project has had.
    if (flags.fresh) k.sync({ graph: parsed.kg === true });
    return runSearch(k, parsed);
  });
  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/entries', summary: 'List knowledge entries by filter', tags, response: entryListResponse }, async ({ query }) => {
    const q = query as Query;
    const flags = parseInput(entryQuery, q, 'query');
    const k = opts.pool.get(rootOf(q), flags.global);
    const entries = k.list({ type: q.type, category: q.category, tag: q.tag, keyword: q.keyword, workspace: q.workspace, includeDeprecated: flags.includeDeprecated });
    return { count: entries.length, entries };
  });
  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/entries/:id', summary: 'One entry by id or alias, with its graph neighbours (or a code-graph node)', tags, response: entryLoadResponse }, async ({ query, params }) => {
    const q = query as Query;
    const flags = parseInput(loadQuery, q, 'query');
    const { id } = params as { id: string };
    return opts.pool.get(rootOf(q), flags.global).load(id, { includeDeprecated: flags.includeDeprecated });
  });
  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/health', summary: 'Problems found in the knowledge files (kind=spec|knowhow|wiki)', tags, response: knowledgeHealthResponse }, async ({ query }) => {
    const q = query as Query;
    if (q.kind !== undefined && q.kind !== 'spec' && q.kind !== 'knowhow' && q.kind !== 'wiki') {
      throw new MaestroError('BAD_INPUT', `kind: "${String(q.kind).slice(0, 50)}" is not a knowledge kind; give spec, knowhow or wiki, or leave it out for all.`, { details: { field: 'kind' } });
    }
    const kind = q.kind;
    return opts.pool.get(rootOf(q), parseInput(healthQuery, q, 'query').global).health(kind);
  });
  if (opts.projectRoot) {
    if (!opts.lifecycle || !opts.env) throw new Error('knowledgeRoutes: projectRoot needs the lifecycle context and the environment of the KnowledgeService (lifecycle, env)');
    registerReviewRoutes(app, { projectRoot: opts.projectRoot, promoteCommitted: opts.promoteCommitted, supersededOf: opts.supersededOf, beforeReview: opts.beforeReview, lifecycle: opts.lifecycle, env: opts.env, doc });
  }
};
