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
  DUPLICATE_PROJECT: 409,
  SELF_DEPENDENCY: 400,
  CROSS_PROJECT_DEPENDENCY: 400,
  DEPENDENCY_CYCLE: 400,
  CORRUPT_COLUMN: 500,
  STALE_CLAIM: 409,
  WRONG_GATE: 409,
  SCHEMA_TOO_NEW: 500,
  DATABASE_UNREACHABLE: 503,
  CONFIG_INVALID: 400,
  LOCK_TIMEOUT: 503,
  UNKNOWN_KNOWLEDGE_ID: 404,
  KNOWLEDGE_CONFLICT: 409,
  DEPRECATED_KNOWLEDGE: 410,
  INTERNAL: 500,
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

export function isMaestroError(err: unknown, code?: ErrorCode): err is MaestroError {
  return err instanceof MaestroError && (code === undefined || err.code === code);
}
