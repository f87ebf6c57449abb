/**
 * One catalogue of the errors a user can see. Each has a stable code, an HTTP
 * status for the API, and a message that says what was wrong and where. The
 * CLI prints the same message and exits non-zero; the API's one error handler
 * maps `status` and answers a generic 500 for anything that is not a MaestroError.
 */

export const ERROR_CATALOGUE = {
  BAD_INPUT: 400,
  ILLEGAL_TRANSITION: 409,
  TASK_BUSY: 409,
  UNKNOWN_PROJECT: 404,
  UNKNOWN_TASK: 404,
  UNKNOWN_RUN: 404,
  UNKNOWN_SESSION: 404,
  DUPLICATE_PROJECT: 409,
  /** The project is archived: no new work until it is restored. */
  PROJECT_ARCHIVED: 409,
  /** The project has work in flight or at a gate: it cannot be archived now. */
  PROJECT_BUSY: 409,
  /** A project's settings changed since the client read the ones its change starts from: nothing was saved. */
  SETTINGS_CHANGED: 409,
  SELF_DEPENDENCY: 400,
  CROSS_PROJECT_DEPENDENCY: 400,
  DEPENDENCY_CYCLE: 400,
  CORRUPT_COLUMN: 500,
  STALE_CLAIM: 409,
  WRONG_GATE: 409,
  SCHEMA_TOO_NEW: 500,
  DATABASE_UNREACHABLE: 503,
  CONFIG_INVALID: 400,
  // Agent runs (src/agents, src/git, src/executor)
  UNKNOWN_PROVIDER: 400,
  SCRIPT_INVALID: 400,
  JOB_INVALID: 400,
  GIT_MISSING: 500,
  /** A project's shared remote (config.remote) did not answer a clone or fetch: a moment to wait, not the task's fault. */
  REMOTE_UNREACHABLE: 503,
  /** A review taken over from another daemon whose executed commit this daemon cannot fetch (never pushed to the shared remote): the task runs again from ready. */
  WORK_NOT_PUBLISHED: 409,
  GIT_FAILED: 500,
  NOT_A_REPOSITORY: 400,
  /** A task's worktree deleted while a run worked in it: the run stops before committing; a retry makes it again on the task's branch. */
  WORKTREE_GONE: 409,
  /** The agent moved its worktree's HEAD off the task's branch (another branch, or detached): nothing is committed there. */
  LEFT_BRANCH: 409,
  /** The task's branch moved while a review read it: the verdicts are about another commit. */
  BRANCH_MOVED: 409,
  /** An approval named a commit that is no longer the one waiting at exec_review (reviewed again since): nothing was approved. */
  STALE_REVIEW: 409,
  DIRTY_MAIN: 409,
  /** A checkout's index.lock exists (a git process at work there, or one that crashed): git can merge nothing into it. */
  REPO_LOCKED: 409,
  MERGE_CONFLICT: 409,
  NOT_FAST_FORWARD: 409,
  DIVERGENCE_TOO_HIGH: 409,
  AGENT_FAILED: 502,
  AGENT_TIMEOUT: 504,
  PLAN_INVALID: 422,
  VERDICT_INVALID: 422,
  AGENT_ANSWER_INVALID: 422,
  CHECK_FAILED: 422,
  DIFF_GATE: 422,
  REVIEW_ROUNDS_EXHAUSTED: 409,
  /** A task version has no change to show yet (never executed) or its commits are gone. */
  NO_DIFF: 409,
  INTERRUPTED: 503,
  // The CLI and MCP server as API clients (src/cli/client.ts); UNAUTHORIZED and NOT_FOUND are the API's own.
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  // The API's front door (src/api/guard.ts): a foreign Host or Origin, a body that is not JSON.
  FORBIDDEN: 403,
  UNSUPPORTED_MEDIA_TYPE: 415,
  DAEMON_UNREACHABLE: 503,
  /** Something answers at the daemon's URL, but not as a Maestro daemon (a web server, a proxy's error page). */
  NOT_A_DAEMON: 502,
  ALREADY_EXISTS: 409,
  LOCK_TIMEOUT: 503,
  /** Another live daemon holds this MAESTRO_HOME's lock. */
  HOME_IN_USE: 409,
  /** `maestro stop` found no daemon to stop: none holds the home's lock, or none answers at the URL it was given. */
  DAEMON_NOT_RUNNING: 404,
  /** `maestro stop` asked the daemon to stop, and it had not exited within --timeout (it goes on stopping). */
  STOP_TIMEOUT: 504,
  /** The daemon is stopping: it answers only `maestro stop` (to follow its hand-over) and /api/health until it exits. */
  DAEMON_STOPPING: 503,
  /** `maestro stop`: the daemon's answer ended before it said its hand-over was done (killed, or its host cut off). */
  STOP_UNCONFIRMED: 502,
  /** Something else listens on the daemon's port: the daemon did not start, and made nothing in its home. */
  PORT_IN_USE: 409,
  UNKNOWN_KNOWLEDGE_ID: 404,
  KNOWLEDGE_CONFLICT: 409,
  DEPRECATED_KNOWLEDGE: 410,
  STALE_RECEIPT: 409,
  RUN_SEALED: 409,
  INTERNAL: 500,
  // Safe by default (issue 13): a path parameter that leaves the registered projects.
  PATH_OUTSIDE_PROJECTS: 403,
  // Faults of the machine (issue 13): a full disk, a read-only home, a damaged or emptied database.
  // 507 Insufficient Storage: the request was fine, the disk was not.
  DISK_FULL: 507,
  HOME_READ_ONLY: 503,
  DATABASE_CORRUPT: 500,
  DATABASE_EMPTY: 500,
  // A file Maestro wrote (a ledger, a receipt, a session or run file, a report) that no longer parses:
  // the request was fine, the disk was not (not BAD_INPUT, which blames the caller). CLI exit 1.
  CORRUPT_FILE: 500,
  // Agent CLIs (src/agents/cli: codex, gemini, cursor, opencode): why a run of one ended without an answer.
  AGENT_NOT_INSTALLED: 424,
  AGENT_LOGIN_REQUIRED: 424,
  AGENT_RATE_LIMITED: 429,
  AGENT_STREAM_BROKEN: 502,
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class MaestroError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MaestroError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code];
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** The one choke point for unknown errors: always returns an Error, keeping the original as `cause`. */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  if (typeof err === 'string') return new Error(err);
  let text: string;
  try {
    text = JSON.stringify(err);
  } catch {
    text = String(err);
  }
  return new Error(`Non-error thrown: ${text}`, { cause: err });
}

/** What a user is shown for an error (the API body, a per-item error in a list): our own code and message, else a generic INTERNAL that leaks nothing. */
export function errorBody(err: unknown): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
  return err instanceof MaestroError ? err.toJSON() : { code: 'INTERNAL', message: 'Internal error; the daemon log has the details.' };
}

export function isMaestroError(err: unknown, code?: ErrorCode): err is MaestroError {
  return err instanceof MaestroError && (code === undefined || err.code === code);
}
