/**
 * The public surface of the knowledge subsystem, for the daemon, the
 * orchestrator and the observer. (The CLI imports the modules it needs
 * directly, lazily, to keep `maestro search` starting fast.)
 */
export { openKnowledge, type Knowledge, type KnowledgeOptions, type LoadedEntry, type HealthReport, type ListFilters, type CodeResponse, type MixedResponse } from './knowledge.js';
export { createKnowledgePool, type KnowledgePool } from './pool.js';
export { KnowledgeService, resolveKnowledgeConfig, type KnowledgeConfig } from './service.js';
export { parseSearchRequest, runSearch, type SearchRequest } from './search/params.js';
export type { SearchOptions, SearchResponse, SearchResult } from './search/search.js';
export type { SearchFilters } from './index/query.js';
export type { KgResponse, KgResult, CodeHit, CodeNode, GraphNeighbor } from './graph/graph.js';
export type { KnowledgeEntry, KnowledgeSource, SourceFile, GraphEdge, EntryKind } from './format/entry.js';
export { resolveWorkflowRoot, type WorkflowRoot } from './format/root.js';
export { builtinSources, loadCorpus, effectiveDeprecated } from './format/corpus.js';
export { parseSpecText, VALID_CATEGORIES, type SpecEntry, type Finding } from './format/specParser.js';
export { parseKnowhowText, KNOWHOW_TYPES, type KnowhowDoc } from './format/knowhowParser.js';
export { appendSpecEntry, supersedeSpec, deprecateSpec, markSpecConflict, type AppendSpecInput, type AppendSpecResult } from './format/specWriter.js';
export { addKnowhow, supersedeKnowhow, deprecateKnowhow, type AddKnowhowInput, type AddKnowhowResult } from './format/knowhowWriter.js';
export { buildKeywordIndex, type KeywordIndex, type KeywordHit } from './search/keywordIndex.js';
export { withCorpusLock } from './format/lock.js';
export { openAiCompatibleEmbedder, embedderFromEnv, type Embedder } from './vectors/embeddings.js';
export { onnxEmbedder, type OnnxEmbedderOptions } from './vectors/onnxEmbedder.js';
export { wikiSource, wikiRootFor } from './format/wikiSource.js';
export type { CodeSearchResult, MixedResult } from './search/mixed.js';
