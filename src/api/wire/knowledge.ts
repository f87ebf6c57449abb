/**
 * What the knowledge read routes answer (src/api/routes/knowledge.ts):
 * search, entries, one entry, health. Declared once, in the style of
 * responses.ts; knowledge.test.ts checks each schema against the type the
 * knowledge library returns, field for field, so a field added there breaks
 * the build until it is described here. The enums are restated (not imported
 * from src/knowledge) so this file stays pure: zod only, as the web imports it.
 */
import { z } from 'zod';

const entryStatus = z.enum(['active', 'deprecated']);

/** One knowledge entry with its three identities (src/knowledge/format/entry.ts). */
export const knowledgeEntrySchema = z.strictObject({
  id: z.string().describe('canonical id'),
  graphId: z.string(),
  aliases: z.array(z.string()).describe('older ids that still resolve'),
  kind: z.enum(['spec', 'knowhow', 'wiki']),
  scope: z.string().describe('project | global | team | personal | workspace | wiki'),
  workspace: z.string().nullable(),
  type: z.string(),
  category: z.string().nullable(),
  tags: z.array(z.string()),
  title: z.string(),
  summary: z.string(),
  body: z.string(),
  declaredStatus: entryStatus.describe('as written in the file'),
  storedStatus: z.string().optional().describe('the status word as written when it says more: draft, proposed, superseded…'),
  confidence: z.string().nullable(),
  date: z.string().nullable(),
  file: z.string().describe('absolute path of the file holding the entry'),
  line: z.number().nullable(),
  family: z.string(),
  sid: z.string().nullable(),
  supersedes: z.array(z.string()),
  supersededBy: z.string().nullable(),
  related: z.array(z.string()),
  references: z.array(z.string()),
});

export const listedEntrySchema = knowledgeEntrySchema.extend({ status: entryStatus.describe('after supersession and hiding') });

export const graphNeighborSchema = z.strictObject({ rel: z.string(), direction: z.enum(['out', 'in']), id: z.string(), resolved: z.boolean() });
export const loadedEntrySchema = listedEntrySchema.extend({ neighbors: z.array(graphNeighborSchema) });

/** A code-graph node (`file:<path>` or `code:<path>#<name>`); a file lists its symbols and imports. */
export const codeNodeSchema = z.strictObject({
  id: z.string(),
  kind: z.string(),
  name: z.string(),
  filePath: z.string(),
  line: z.number().nullable(),
  signature: z.string(),
  symbols: z.array(z.strictObject({ id: z.string(), name: z.string(), kind: z.string(), line: z.number().nullable() })).optional(),
  imports: z.array(z.strictObject({ spec: z.string(), resolved: z.string().nullable() })).optional(),
  importedBy: z.array(z.string()).optional(),
});

// ---- search (FORMATS §5.3) ----

export const searchFiltersSchema = z.strictObject({
  type: z.string().optional(),
  category: z.string().optional(),
  tag: z.string().optional(),
  workspace: z.string().optional(),
  status: z.enum(['active', 'deprecated', 'all']).optional(),
  includeDeprecated: z.boolean().optional(),
  project: z.string().optional().describe("the current project's slug: wiki entries of other projects stay out"),
});

/** A knowledge entry on a result page (`source: "wiki"`: specs, knowhow and wiki entries alike). */
export const searchResultSchema = z.strictObject({
  source: z.literal('wiki'),
  id: z.string(),
  graphId: z.string(),
  aliases: z.array(z.string()),
  kind: z.string(),
  type: z.string(),
  name: z.string(),
  rank: z.number(),
  score: z.number().describe('relevance normalised to the best result (0..1]'),
  summary: z.string(),
  snippet: z.string(),
  category: z.string().nullable(),
  tags: z.array(z.string()),
  status: z.string(),
  confidence: z.string().nullable(),
  workspace: z.string().nullable(),
  file: z.string(),
  line: z.number().nullable(),
  family: z.string(),
  selectionReason: z.enum(['relevance', 'diversity', 'exploration']),
});

/** A code symbol on the mixed page (`source: "code"`). */
export const codeSearchResultSchema = z.strictObject({
  source: z.literal('code'),
  id: z.string(),
  graphId: z.string(),
  kind: z.string(),
  name: z.string(),
  detail: z.string().describe('path:line'),
  rank: z.number(),
  score: z.number(),
  signature: z.string(),
  filePath: z.string(),
  line: z.number().nullable(),
  selectionReason: z.literal('relevance'),
});

/** The default search: knowledge entries with code symbols mixed in (src/knowledge/search/mixedResponse.ts). */
export const mixedSearchResponse = z.strictObject({
  query: z.string(),
  count: z.number(),
  wikiCount: z.number(),
  codeCount: z.number(),
  typeCounts: z.record(z.string(), z.number()),
  filtersApplied: searchFiltersSchema,
  diversity: z.enum(['balanced', 'off']),
  exploration: z.string().describe('`on`, or why the exploration slot was off'),
  noMatch: z.string().optional().describe('only when nothing matched: why'),
  named: z.number().optional().describe('how many leading results the query named by id or alias; absent when none'),
  retrieval: z.enum(['lexical', 'hybrid']),
  codeIndex: z.enum(['ok', 'not-initialized', 'empty', 'skipped']),
  codeIndexHint: z.string().optional(),
  sourceWeights: z.strictObject({ wiki: z.number(), code: z.number(), reason: z.enum(['default', 'identifier', 'strongCode']) }),
  results: z.array(z.discriminatedUnion('source', [searchResultSchema, codeSearchResultSchema])),
});

export const kgResultSchema = z.strictObject({
  id: z.string(),
  graphId: z.string(),
  aliases: z.array(z.string()),
  sourceType: z.enum(['spec', 'knowhow', 'wiki', 'codegraph']),
  kind: z.string(),
  name: z.string(),
  definition: z.string(),
  filePath: z.string(),
  score: z.number(),
  category: z.string().nullable(),
  status: z.string(),
  selectionReason: z.enum(['relevance', 'diversity']),
});

/** `kg=true`: MaestroGraph, knowledge and code nodes. */
export const kgSearchResponse = z.strictObject({
  query: z.string(),
  engine: z.literal('maestrograph'),
  count: z.number(),
  summary: z.strictObject({ codeSymbols: z.number(), specRules: z.number(), knowhowDocs: z.number(), wikiEntries: z.number(), total: z.number() }),
  results: z.array(kgResultSchema),
});

export const codeHitSchema = z.strictObject({ id: z.string(), kind: z.string(), name: z.string(), filePath: z.string(), line: z.number().nullable(), score: z.number(), signature: z.string() });

/** `code=true`: the code graph only. */
export const codeSearchResponse = z.strictObject({ query: z.string(), count: z.number(), codeIndex: z.enum(['ok', 'empty']), results: z.array(codeHitSchema) });

/** `GET /api/knowledge/search`: the mixed page, or with `kg=true` the graph's, or with `code=true` the code graph's. */
export const knowledgeSearchResponse = z.union([mixedSearchResponse, kgSearchResponse, codeSearchResponse]);

// ---- entries and health ----

export const entryListResponse = z.strictObject({ count: z.number(), entries: z.array(listedEntrySchema) });
/** `GET /api/knowledge/entries/:id`: an entry with its graph neighbours, or a code-graph node for `code:` / `file:` ids. */
export const entryLoadResponse = z.union([loadedEntrySchema, codeNodeSchema]);

export const knowledgeFindingSchema = z.strictObject({ file: z.string(), line: z.number(), severity: z.enum(['error', 'warning']), code: z.string(), message: z.string() });
export const knowledgeHealthResponse = z.strictObject({
  ok: z.boolean().describe('no error finding'),
  entries: z.number(),
  errors: z.number(),
  warnings: z.number(),
  findings: z.array(knowledgeFindingSchema),
});

type Out<S extends z.ZodType> = z.output<S>;
export type KnowledgeEntry = Out<typeof knowledgeEntrySchema>;
export type ListedEntry = Out<typeof listedEntrySchema>;
export type LoadedEntry = Out<typeof loadedEntrySchema>;
export type CodeNode = Out<typeof codeNodeSchema>;
export type SearchResult = Out<typeof searchResultSchema>;
export type CodeSearchResult = Out<typeof codeSearchResultSchema>;
export type MixedSearch = Out<typeof mixedSearchResponse>;
export type KgSearch = Out<typeof kgSearchResponse>;
export type CodeSearch = Out<typeof codeSearchResponse>;
export type KnowledgeSearch = Out<typeof knowledgeSearchResponse>;
export type EntryList = Out<typeof entryListResponse>;
export type EntryLoad = Out<typeof entryLoadResponse>;
export type KnowledgeHealth = Out<typeof knowledgeHealthResponse>;
