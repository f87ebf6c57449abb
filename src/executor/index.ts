/** What the daemon uses from the executor: the file protocol, the in-process run and the worker process. */
export * from './protocol/index.js';
export { runPipeline, type RunIO } from './run.js';
export { spawnWorker, type WorkerHandle } from './spawn.js';
export { loadProjectConfig, type ProjectConfig } from './projectConfig.js';
export type { PlanResult, PlannedSubtask } from './pipelines/planParse.js';
export type { ExecuteResult } from './pipelines/executor.js';
export type { ReviewResult, SingleReview } from './pipelines/reviewer.js';
export type { ConflictResult } from './pipelines/conflict.js';
export type { Finding } from './pipelines/verdictParse.js';
