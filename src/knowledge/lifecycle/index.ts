/** One import for the CLI (loaded lazily): sessions, runs, ledgers, reconciliation, promotion, audit. */
export { audit } from './audit/audit.js';
export { promote } from './promote/promote.js';
export { resolveAll, resolveCandidate, review, warmSessionSemantic } from './reconcile/review.js';
export { createLifecycleContext, type LifecycleContext } from './context.js';
export { runSource } from './reconcile/receipt.js';
export { resolveWorkflowRoot } from '../format/root.js';
export { checkRun, completeRun, record, recordConsumed, sealRun, sealSession, stage } from './session/ops.js';
export { createRun, createSession, listRunIds, listSessions, readRun, readSession, scanSessions, setActiveRun } from './session/store.js';
export { readLedger } from './ledger/ledger.js';
