/**
 * The FORMATS §5.2 mixed page: code symbols join a knowledge search's results
 * only from a built code graph and only without facet filters (a facet names
 * knowledge fields code symbols do not have); the source weights come from
 * the query and the code hits (mixed.ts).
 */
import type Database from 'better-sqlite3';
import { searchCode } from '../graph/graph.js';
import { codeGraphBuilt, hasCodeSymbols } from '../index/codeIndexState.js';
import { mergeMixed, sourceWeights, type MixedResult, type WeightReason } from './mixed.js';
import type { SearchOptions, SearchResponse } from './search.js';

/** FORMATS §5.3 default (mixed) search response. */
export interface MixedResponse extends Omit<SearchResponse, 'results'> {
  retrieval: 'lexical' | 'hybrid';
  /** ok | not-initialized (no code graph built yet) | empty | skipped (a facet filter limits the search to knowledge). */
  codeIndex: 'ok' | 'not-initialized' | 'empty' | 'skipped';
  codeIndexHint?: string;
  /** Source weights used for the merge and why. */
  sourceWeights: { wiki: number; code: number; reason: WeightReason };
  results: MixedResult[];
}

const NOT_INITIALIZED_HINT = 'No code graph yet: run `maestro search --code <query>` once to build it; later searches mix code symbols in.';

function codeIndexOf(db: Database.Database, opts: SearchOptions): MixedResponse['codeIndex'] {
  if (opts.type || opts.category || opts.tag || opts.workspace) return 'skipped';
  if (!codeGraphBuilt(db)) return 'not-initialized';
  return hasCodeSymbols(db) ? 'ok' : 'empty';
}

export function mixCode(db: Database.Database, query: string, opts: SearchOptions, base: SearchResponse & { retrieval: 'lexical' | 'hybrid' }): MixedResponse {
  const limit = Math.max(1, Math.min(200, Math.floor(opts.limit ?? 10)));
  const codeIndex = codeIndexOf(db, opts);
  const code = codeIndex === 'ok' ? searchCode(db, query, limit) : [];
  const weights = sourceWeights(query, code);
  const results = mergeMixed(base.results, code, weights, limit, base.named ?? 0);
  const typeCounts: Record<string, number> = {};
  for (const r of results) typeCounts[r.kind] = (typeCounts[r.kind] ?? 0) + 1;
  const wikiCount = results.filter((r) => r.source === 'wiki').length;
  return {
    ...base,
    count: results.length,
    wikiCount,
    codeCount: results.length - wikiCount,
    typeCounts,
    codeIndex,
    ...(codeIndex === 'not-initialized' ? { codeIndexHint: NOT_INITIALIZED_HINT } : {}),
    sourceWeights: weights,
    noMatch: results.length ? undefined : base.noMatch,
    results,
  };
}
