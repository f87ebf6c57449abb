/**
 * MaestroGraph: knowledge entries, files, tasks/runs and code symbols as
 * nodes; supersedes, related, references, consumed-by, imports and defines as
 * edges. Stored in the knowledge index (edges table + code tables), rebuilt
 * from the files like the rest of the projection.
 *
 * `--kg` search runs over the same nodes with type isolation pushed into the
 * queries (`--type knowhow --kg` never touches the code or spec tables), a
 * cap per source type and per family, and ids that `maestro load` reads back.
 */
import type Database from 'better-sqlite3';
import { codeKindBoost } from '../search/boosts.js';
import { codeFileLinks, codeSymbol, matchCodeSymbols } from '../index/codeSymbols.js';
import { aliasesOf, edgesAt } from '../index/graphEdges.js';
import { fetchCandidates, type SearchFilters } from '../index/query.js';
import { namedEntries } from '../index/namedEntries.js';
import { queryTerms } from '../format/text.js';
import type { KnowledgeEntry } from '../format/entry.js';

export interface GraphNeighbor {
  rel: string;
  direction: 'out' | 'in';
  /** Canonical id when the other end resolves to an entry, else the reference as written. */
  id: string;
  resolved: boolean;
}

/** One step of traversal from a canonical id, in both directions. */
export function neighbors(db: Database.Database, id: string, rel?: string): GraphNeighbor[] {
  const out: GraphNeighbor[] = [];
  const refs = aliasesOf(db, id);
  const mine = refs.length ? refs : [id];
  for (const r of edgesAt(db, mine, 'out', rel)) out.push({ rel: r.rel, direction: 'out', id: r.canonical ?? (looksLikePath(r.ref) ? `file:${r.ref}` : r.ref), resolved: r.canonical !== null });
  for (const r of edgesAt(db, mine, 'in', rel)) out.push({ rel: r.rel, direction: 'in', id: r.canonical ?? r.ref, resolved: r.canonical !== null });
  // consumed-by edges are written with the knowledge id as src; also show ledger edges naming this id.
  const seen = new Set<string>();
  return out.filter((n) => {
    const k = `${n.direction}|${n.rel}|${n.id}`;
    if (seen.has(k) || n.id === id) return false;
    seen.add(k);
    return true;
  });
}

function looksLikePath(ref: string): boolean {
  return /[/\\]/.test(ref) || /\.\w{1,5}$/.test(ref);
}

/** Breadth-first traversal to `depth` steps. */
export function traverse(db: Database.Database, start: string, depth = 2, rel?: string): Array<GraphNeighbor & { from: string; depth: number }> {
  const out: Array<GraphNeighbor & { from: string; depth: number }> = [];
  const seen = new Set([start]);
  let frontier = [start];
  for (let d = 1; d <= depth && frontier.length; d++) {
    const next: string[] = [];
    for (const node of frontier) {
      for (const n of neighbors(db, node, rel)) {
        if (seen.has(n.id)) continue; // an edge back to a node already reached adds nothing
        out.push({ ...n, from: node, depth: d });
        if (n.resolved) {
          seen.add(n.id);
          next.push(n.id);
        }
      }
    }
    frontier = next;
  }
  return out;
}

export interface CodeHit {
  id: string;
  kind: string;
  name: string;
  filePath: string;
  line: number | null;
  score: number;
  signature: string;
}

/** FORMATS §5.2 name-match bonus: exact 50, prefix 30, substring 10 (on top of BM25), times the code kind boost (boosts.ts). */
export function searchCode(db: Database.Database, query: string, limit: number): CodeHit[] {
  const terms = queryTerms(query).slice(0, 32);
  if (terms.length === 0) return [];
  const match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
  const rows = matchCodeSymbols(db, match, Math.min(500, Math.max(4 * limit, 40)));
  const q = query.trim().toLowerCase();
  const hits = rows.map((r) => {
    const n = r.name.toLowerCase();
    const bonus = n === q ? 50 : n.startsWith(q) && q ? 30 : q && n.includes(q) ? 10 : 0;
    return { id: r.id, kind: r.kind, name: r.name, filePath: r.file, line: r.line, score: (-r.rank + bonus) * codeKindBoost(r.kind), signature: r.signature };
  });
  hits.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
  // One slot per file: a file and its own symbols are one place to look, shown by the best of them.
  const seen = new Set<string>();
  const one = hits.filter((h) => !seen.has(h.filePath) && seen.add(h.filePath));
  const max = one[0]?.score || 1;
  return one.slice(0, limit).map((h) => ({ ...h, score: Math.round((h.score / max) * 1e4) / 1e4 }));
}

export interface KgResult {
  id: string;
  graphId: string;
  aliases: string[];
  sourceType: 'spec' | 'knowhow' | 'wiki' | 'codegraph';
  kind: string;
  name: string;
  definition: string;
  filePath: string;
  score: number;
  category: string | null;
  status: string;
  selectionReason: 'relevance' | 'diversity';
}

export interface KgResponse {
  query: string;
  engine: 'maestrograph';
  count: number;
  summary: { codeSymbols: number; specRules: number; knowhowDocs: number; wikiEntries: number; total: number };
  results: KgResult[];
}

const KG_SOURCES = ['spec', 'knowhow', 'wiki'] as const;

export function searchKg(db: Database.Database, query: string, opts: SearchFilters & { limit: number; code: boolean }): KgResponse {
  const limit = opts.limit;
  const candidateLimit = Math.min(500, Math.max(4 * limit, 40));
  const pool: Array<KgResult & { family: string; norm: number }> = [];
  // Type isolation: a type filter names exactly the source types that are queried at all.
  const wantCode = opts.code && (!opts.type || opts.type === 'code' || opts.type === 'codegraph');
  const wantKnowledge = !opts.type || (opts.type !== 'code' && opts.type !== 'codegraph');
  // Entries the query names by id or alias lead, under the same filters (index/namedEntries.ts).
  const named = wantKnowledge ? namedEntries(db, query, opts).slice(0, limit) : [];
  const namedIds = new Set(named.map((c) => c.entry.id));
  if (wantKnowledge) {
    const isKind = (t: string | undefined): t is (typeof KG_SOURCES)[number] => KG_SOURCES.includes(t as (typeof KG_SOURCES)[number]);
    // One query per source type asked for; a narrower type (recipe, tip…) is one query filtered by it.
    const kinds = opts.type && !isKind(opts.type) ? [null] : KG_SOURCES.filter((k) => !opts.type || opts.type === k);
    for (const kind of kinds) {
      const cands = fetchCandidates(db, query, { ...opts, type: kind ?? opts.type }, candidateLimit);
      const max = cands[0]?.bm25 || 1;
      for (const c of cands) if (!namedIds.has(c.entry.id)) pool.push({ ...kgFromEntry(c.entry, c.status, c.bm25), family: `${c.entry.kind}:${c.entry.file.toLowerCase()}`, norm: c.bm25 / max });
    }
  }
  if (wantCode) {
    for (const h of searchCode(db, query, candidateLimit)) {
      pool.push({ id: h.id, graphId: h.id, aliases: [], sourceType: 'codegraph', kind: h.kind, name: h.name, definition: h.signature.slice(0, 120), filePath: h.filePath, score: h.score, category: null, status: 'active', selectionReason: 'relevance', family: `codegraph:${h.filePath}`, norm: h.score });
    }
  }
  pool.sort((a, b) => b.norm - a.norm || a.id.localeCompare(b.id));
  const sourceCap = Math.max(1, Math.ceil(limit / 2));
  // Three passes (FORMATS §5.2): caps on → source cap off → family cap 2.
  const passes = [
    { source: sourceCap, family: 1 },
    { source: Infinity, family: 1 },
    { source: Infinity, family: 2 },
  ];
  const picked: Array<(typeof pool)[number]> = [];
  const ids = new Set<string>();
  for (const [pi, pass] of passes.entries()) {
    const perSource = new Map<string, number>();
    const perFamily = new Map<string, number>();
    for (const p of picked) {
      perSource.set(p.sourceType, (perSource.get(p.sourceType) ?? 0) + 1);
      perFamily.set(p.family, (perFamily.get(p.family) ?? 0) + 1);
    }
    for (const c of pool) {
      if (picked.length >= limit - named.length) break;
      if (ids.has(c.id) || (perSource.get(c.sourceType) ?? 0) >= pass.source || (perFamily.get(c.family) ?? 0) >= pass.family) continue;
      picked.push({ ...c, selectionReason: pi === 0 ? 'relevance' : 'diversity' });
      ids.add(c.id);
      perSource.set(c.sourceType, (perSource.get(c.sourceType) ?? 0) + 1);
      perFamily.set(c.family, (perFamily.get(c.family) ?? 0) + 1);
    }
  }
  picked.sort((a, b) => b.norm - a.norm || a.id.localeCompare(b.id));
  const results = [...named.map((c) => kgFromEntry(c.entry, c.status, 1)), ...picked.map(({ family: _f, norm, ...r }) => ({ ...r, score: Math.round(norm * 1e4) / 1e4 }))];
  const n = (t: string) => results.filter((r) => r.sourceType === t).length;
  return {
    query,
    engine: 'maestrograph',
    count: results.length,
    summary: { codeSymbols: n('codegraph'), specRules: n('spec'), knowhowDocs: n('knowhow'), wikiEntries: n('wiki'), total: results.length },
    results,
  };
}

function kgFromEntry(e: KnowledgeEntry, status: string, score: number): KgResult {
  const def = (e.summary || e.body).replace(/\s+/g, ' ').trim().slice(0, 120);
  return {
    id: e.id,
    graphId: e.graphId,
    aliases: e.graphId !== e.id ? [e.graphId] : [],
    sourceType: e.kind,
    kind: e.type,
    name: e.title,
    definition: def,
    filePath: e.file,
    score,
    category: e.category,
    status,
    selectionReason: 'relevance',
  };
}

export interface CodeNode {
  id: string;
  kind: string;
  name: string;
  filePath: string;
  line: number | null;
  signature: string;
  symbols?: Array<{ id: string; name: string; kind: string; line: number | null }>;
  imports?: Array<{ spec: string; resolved: string | null }>;
  importedBy?: string[];
}

/** Reads a code-graph node (`file:<path>` or `code:<path>#<name>`) for `maestro load`. */
export function loadCodeNode(db: Database.Database, id: string): CodeNode | null {
  const row = codeSymbol(db, id);
  if (!row) return null;
  const node: CodeNode = { id: row.id, kind: row.kind, name: row.name, filePath: row.file, line: row.line, signature: row.signature };
  if (row.kind === 'file') Object.assign(node, codeFileLinks(db, row.file));
  return node;
}
