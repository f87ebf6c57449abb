export { HookRunner, DEFAULT_HOOK_TIMEOUT_MS, type HookRunnerOptions } from './runner.js';
export { HOOK_NAMES, HOOK_CANCELLED_EVENT, hookCancelPayload, isHookName, shellFileName, type HookName, type HookContexts, type HookOutcome, type ConflictMode } from './contract.js';
