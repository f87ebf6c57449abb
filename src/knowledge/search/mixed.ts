/**
 * FORMATS §5.2 "mixed wiki + code merge": the default `maestro search` page
 * holds knowledge results and, once the code graph exists, code symbols,
 * merged as the tool the notes came from does:
 *
 * - knowledge scores carry a type boost (spec 1.15, domain 1.10, knowhow
 *   1.05, project/roadmap 0.95, issue 0.85, note 0.80, anything else 1.0) and
 *   a confidence penalty (contested 0.5, low 0.7; boosts.ts) — applied in search.ts
 *   before selection, so MMR, caps and the exploration slot see final scores;
 * - code scores carry a kind boost (CODE_KIND_BOOST) on top of BM25 plus the
 *   name-match bonus (exact 50, prefix 30, substring 10; graph.ts);
 * - each source is rank-normalised (the i-th result of a source, 1-based,
 *   counts 1/i) and weighted: knowledge 0.6 / code 0.4; an identifier query
 *   0.4 / 0.6; a strong code match (a symbol named exactly as the query)
 *   0.5 / 0.5. The page is ordered by weight × rank norm (ties: knowledge
 *   first, then the source's own order) and cut to the limit;
 * - the `score` shown stays per-source: finalScore / the source's max.
 *
 * FORMATS leaves the code kind boosts and the exact rank normalisation
 * unstated ("code kind boosts …; rank-normalized"); the values here are
 * Maestro's and are documented in src/knowledge/README.md.
 */
import type { CodeHit } from '../graph/graph.js';
import type { SearchResult } from './search.js';

// The boosts live in boosts.ts (search.ts and graph.ts apply them without importing the merge).
export { CODE_KIND_BOOST, CONFIDENCE_PENALTY, WIKI_TYPE_BOOST, codeKindBoost, knowledgeBoost } from './boosts.js';

export const SOURCE_WEIGHTS = {
  default: { wiki: 0.6, code: 0.4 },
  identifier: { wiki: 0.4, code: 0.6 },
  strongCode: { wiki: 0.5, code: 0.5 },
} as const;

/**
 * An identifier query (FORMATS §5.1 "anchor" tokens): every word is camelCase
 * or PascalCase, contains one of `._$/:@-`, or mixes letters and digits —
 * `openKnowledge`, `src/knowledge/search.ts`, `utf8`, `search_index`.
 */
export function isIdentifierQuery(query: string): boolean {
  const words = query.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return false;
  return words.every((w) => /[a-z][A-Z]/.test(w) || /^[A-Z][a-z]+[A-Z]/.test(w) || /[._$/:@-]/.test(w.replace(/^[-.]+|[-.]+$/g, '')) || (/\p{L}/u.test(w) && /\d/.test(w)));
}

export type WeightReason = 'default' | 'identifier' | 'strongCode';

/** Source weights for a query and its code hits. */
export function sourceWeights(query: string, code: readonly Pick<CodeHit, 'name'>[]): { wiki: number; code: number; reason: WeightReason } {
  if (code.length === 0) return { ...SOURCE_WEIGHTS.default, reason: 'default' };
  if (isIdentifierQuery(query)) return { ...SOURCE_WEIGHTS.identifier, reason: 'identifier' };
  const q = query.trim().toLowerCase();
  if (code.some((c) => c.name.toLowerCase() === q)) return { ...SOURCE_WEIGHTS.strongCode, reason: 'strongCode' };
  return { ...SOURCE_WEIGHTS.default, reason: 'default' };
}

/** A code symbol on the mixed page (FORMATS §5.3 result shape, `source: "code"`). */
export interface CodeSearchResult {
  source: 'code';
  id: string;
  graphId: string;
  kind: string;
  name: string;
  /** `path:line`. */
  detail: string;
  rank: number;
  /** finalScore / the best code score of this search (0..1]. */
  score: number;
  signature: string;
  filePath: string;
  line: number | null;
  selectionReason: 'relevance';
}

export type MixedResult = SearchResult | CodeSearchResult;

/**
 * Merges two already-ranked lists (see the header); ranks are renumbered 1..n on the merged page. The first
 * `pinned` knowledge results are entries the query named by id (search.ts): they lead the page whatever the
 * weights, and the rest of the knowledge list is rank-normalised from its own first result.
 */
export function mergeMixed(wiki: readonly SearchResult[], code: readonly CodeHit[], weights: { wiki: number; code: number }, limit: number, pinned = 0): MixedResult[] {
  // Rounded so that equal keys (0.6/3 and 0.4/2) tie exactly instead of by floating-point noise.
  const key = (w: number, i: number) => Math.round((w / (i + 1)) * 1e9) / 1e9;
  const keyed: Array<{ key: number; source: 0 | 1; i: number; r: MixedResult }> = [];
  const head: MixedResult[] = wiki.slice(0, pinned);
  wiki.slice(pinned).forEach((r, i) => keyed.push({ key: key(weights.wiki, i), source: 0, i, r }));
  code.forEach((c, i) =>
    keyed.push({
      key: key(weights.code, i),
      source: 1,
      i,
      r: { source: 'code', id: c.id, graphId: c.id, kind: c.kind, name: c.name, detail: `${c.filePath}${c.line ? `:${c.line}` : ''}`, rank: 0, score: c.score, signature: c.signature, filePath: c.filePath, line: c.line, selectionReason: 'relevance' },
    }),
  );
  keyed.sort((a, b) => b.key - a.key || a.source - b.source || a.i - b.i);
  return [...head, ...keyed.map((k) => k.r)].slice(0, limit).map((r, n) => ({ ...r, rank: n + 1 }));
}
