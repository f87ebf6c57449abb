/**
 * The search request, validated in one place for the CLI, the daemon route
 * and the daemon client, so all three accept exactly the same inputs.
 */
import { MaestroError } from '../../core/errors.js';

export interface SearchRequest {
  query: string;
  type?: string | undefined;
  category?: string | undefined;
  tag?: string | undefined;
  workspace?: string | undefined;
  kg?: boolean | undefined;
  code?: boolean | undefined;
  includeDeprecated?: boolean | undefined;
  diversity?: 'balanced' | 'off' | undefined;
  limit?: number | undefined;
  readOnlyProbe?: boolean | undefined;
  /** Include observer wiki entries tagged for other projects. */
  allProjects?: boolean | undefined;
}

export const MAX_QUERY_CHARS = 4096;

function bool(v: unknown, name: string): boolean | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (v === true || v === 'true' || v === '1') return true;
  if (v === false || v === 'false' || v === '0') return false;
  throw new MaestroError('BAD_INPUT', `${name} must be true or false, got ${JSON.stringify(v)}.`);
}

function str(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || v.length > 200) throw new MaestroError('BAD_INPUT', `${name} must be a short string.`);
  return v;
}

export function parseSearchRequest(raw: Record<string, unknown>): SearchRequest {
  const query = raw.query ?? raw.q;
  if (typeof query !== 'string' || query.trim() === '') throw new MaestroError('BAD_INPUT', 'search needs a query (q).');
  if (query.length > MAX_QUERY_CHARS) throw new MaestroError('BAD_INPUT', `query is ${query.length} characters; the limit is ${MAX_QUERY_CHARS}.`);
  let limit: number | undefined;
  if (raw.limit !== undefined && raw.limit !== '') {
    limit = Number(raw.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new MaestroError('BAD_INPUT', `--limit must be an integer 1–200, got ${JSON.stringify(raw.limit)}.`);
  }
  const diversity = str(raw.diversity, 'diversity');
  if (diversity !== undefined && diversity !== 'balanced' && diversity !== 'off') throw new MaestroError('BAD_INPUT', `--diversity must be balanced or off, got "${diversity}".`);
  const req: SearchRequest = {
    query,
    type: str(raw.type, 'type'),
    category: str(raw.category, 'category'),
    tag: str(raw.tag, 'tag'),
    workspace: str(raw.workspace, 'workspace'),
    kg: bool(raw.kg, 'kg'),
    code: bool(raw.code, 'code'),
    includeDeprecated: bool(raw.includeDeprecated, 'includeDeprecated'),
    diversity: diversity as SearchRequest['diversity'],
    limit,
    readOnlyProbe: bool(raw.readOnlyProbe, 'readOnlyProbe'),
    allProjects: bool(raw.allProjects, 'allProjects'),
  };
  if (req.kg && req.code) throw new MaestroError('BAD_INPUT', '--kg and --code cannot be combined: --kg already includes code symbols.');
  return req;
}

/** Runs a validated request against a Knowledge handle (shared by CLI and daemon): the mixed page, or the graph's (`kg`), or the code graph's (`code`). */
export async function runSearch(k: import('../knowledge.js').Knowledge, req: SearchRequest): Promise<import('../knowledge.js').MixedResponse | import('../graph/graph.js').KgResponse | import('../knowledge.js').CodeResponse> {
  if (req.code) return k.searchCode(req.query, { limit: req.limit ?? 10 });
  if (req.kg) return k.searchKg(req.query, { type: req.type, category: req.category, tag: req.tag, workspace: req.workspace, includeDeprecated: req.includeDeprecated, limit: req.limit ?? 10 });
  return k.searchHybrid(req.query, req);
}

export function toQueryString(req: SearchRequest, root: string, includeGlobal: boolean): string {
  const p = new URLSearchParams();
  for (const [key, v] of Object.entries(req)) if (v !== undefined) p.set(key === 'query' ? 'q' : key, String(v));
  p.set('root', root);
  if (includeGlobal) p.set('global', 'true');
  return p.toString();
}
