/**
 * The observer's public surface: what the CLI, the daemon (HTTP routes, live
 * events, agent seams) and the knowledge index use. Everything else is internal.
 */
export { resolveObserverConfig, type ObserverConfig } from './config.js';
export { observeOnce, openObserverSession, type OpenSessionOptions } from './observe.js';
export { ObserverSession, type ObserverSessionOptions, type SessionHold, type StepResult } from './session.js';
export { ObserverRunner, type ObserverRunnerOptions } from './runner.js';
export { ObserverEventEmitter, type ObserverEvents, type ObserverUpdate } from './events.js';
export { ObserverHub, followFromEnv, type ObserverHubOptions } from './hub.js';
export { SessionFollower, type SessionFollowerOptions } from './follow.js';
export { resolveObserverAgent, observerAgentSeams, type ObserverAgentConfig, type ObserverAgentOverrides } from './agent/config.js';
export { createAgentSummarizer, summaryAnswerSchema, summaryPrompt } from './agent/summary-agent.js';
export { createAgentCurator, curatorAnswerSchema, curatorPrompt } from './agent/curator-agent.js';
export type { SessionView, ExplorationView } from './view.js';

export { readTranscriptFile, TranscriptTail } from './transcript/reader.js';
export { ExplorationCutter } from './transcript/cutter.js';
export type { Exploration, ExplorationNode, TranscriptState, TranscriptIssue } from './transcript/types.js';
export { locateSession, newestSession, claudeProjectDirs, checkWikiRoot, encodeProjectPath, claudeProjectsDir, resolveWikiRoot, resolveWorkspaceRoot, resolveProjectSlug } from './paths.js';

export type { SessionBundle, SummaryItem, FlowchartHint, WikiPersistMeta, RetrievalRecord, WriteRecord, IntentBucket } from './bundle/types.js';
export { loadBundle, patchBundle, writeBundle, type BundleLoad, type BundleLoadStatus } from './bundle/store.js';
export { readSessionIndex, type SessionIndex } from './bundle/session-index.js';

export { SummaryOrchestrator, type SummarizeFn } from './summary/orchestrator.js';
export { deterministicSummary, buildExplorationDigest, type ExplorationDigest } from './summary/digest.js';
export { WikiCuratorService, checkDecision, type CurateFn, type CuratorDecision, type CuratorInput } from './curation/curator.js';
export type { IntentDigest } from './curation/gates.js';
export { acceptProposal, dismissProposal, fileProposal, listProposals, newFacts, type Proposal } from './curation/proposals.js';

export { InMemoryWikiRetriever, WIKI_SEARCH_THRESHOLD, AGENT_CANDIDATE_THRESHOLD, DEFAULT_MATCH_THRESHOLD, type WikiRetriever, type WikiMatch, type RetrievalQuery } from './wiki/retriever.js';
export { listWikiDocuments, listWikiEntries, type WikiDocument, type WikiEntry } from '../knowledge/format/wiki/entries.js';
export type { EntryDraft } from './wiki/writer.js';

export { fileAudit, listAudits, resolveAudit, type AuditRecord } from './upkeep/audit.js';
export { lintWiki, type LintFinding } from './upkeep/lint.js';
export { applyMaintenance, buildMaintenanceReport, type MaintainFn, type MaintenanceReport } from './upkeep/maintain.js';
export { migrateWikiLayout } from './upkeep/migrate.js';
export { redactWiki, type WikiRedaction } from './upkeep/redact.js';
export { ObserverService, type ObserverServiceOptions } from './service.js';
