/**
 * The public surface of the knowledge subsystem, for the daemon, the
 * orchestrator and the observer. (The CLI imports the modules it needs
 * directly, lazily, to keep `maestro search` starting fast.)
 */
export { openKnowledge, type Knowledge, type KnowledgeOptions, type LoadedEntry, type HealthReport, type ListFilters, type CodeResponse, type MixedResponse } from './knowledge.js';
export { createKnowledgePool, type KnowledgePool } from './pool.js';
export { knowledgeRoutes, type KnowledgeRouteOptions } from './http.js';
export { parseSearchRequest, runSearch, type SearchRequest } from './params.js';
export type { SearchOptions, SearchResponse, SearchResult } from './search.js';
export type { SearchFilters } from './index/query.js';
export type { KgResponse, KgResult, CodeHit, CodeNode, GraphNeighbor } from './graph.js';
export type { KnowledgeEntry, KnowledgeSource, SourceFile, GraphEdge, EntryKind } from './entry.js';
export { resolveWorkflowRoot, type WorkflowRoot } from './root.js';
export { builtinSources, loadCorpus, effectiveDeprecated } from './corpus.js';
export { parseSpecText, VALID_CATEGORIES, type SpecEntry, type Finding } from './specParser.js';
export { parseKnowhowText, KNOWHOW_TYPES, type KnowhowDoc } from './knowhowParser.js';
export { appendSpecEntry, supersedeSpec, deprecateSpec, markSpecConflict, type AppendSpecInput, type AppendSpecResult } from './specWriter.js';
export { addKnowhow, supersedeKnowhow, deprecateKnowhow, type AddKnowhowInput, type AddKnowhowResult } from './knowhowWriter.js';
export { buildKeywordIndex, type KeywordIndex, type KeywordHit } from './keywordIndex.js';
export { withCorpusLock } from './lock.js';
export { writeFileAtomic } from './atomic.js';
export { openAiCompatibleEmbedder, embedderFromEnv, type Embedder } from './embeddings.js';
export { onnxEmbedder, type OnnxEmbedderOptions } from './onnxEmbedder.js';
export { wikiSource, wikiRootFor } from './wikiSource.js';
export type { CodeSearchResult, MixedResult } from './mixed.js';
