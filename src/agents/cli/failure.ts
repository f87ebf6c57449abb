/**
 * Why a JSONL agent run failed, in words a user can act on. The same four
 * reasons for every tool, as for Claude: the executable is missing, the
 * login is missing or expired, the provider is rate limiting, or the stream
 * broke off (a crash mid-run, a kill, a tool that exited without a result).
 * Anything else the tool reported is AGENT_FAILED with its own message.
 */
import { MaestroError } from '../../core/errors.js';
import type { JsonlExit } from './jsonl.js';

export interface FailureContext {
  /** "Codex CLI" */
  name: string;
  /** The executable as started. */
  file: string;
  /** How to log in again, as an instruction (`run \`codex login\``). */
  loginHint: string;
  /** Exit codes the tool documents as "not authenticated" (gemini: 41). */
  loginExitCodes?: number[];
}

// Wording seen from the four tools and their model APIs; matched against the error event and stderr.
// A bare 401 or 429 is not enough: "src/a.ts:401" in a tool's stderr is a line number.
const LOGIN_PATTERN = /not logged in|logged out|please (log ?in|login|sign in|authenticate)|unauthori[sz]ed|status:? *401\b|authentication (failed|required|error)|invalid (x-)?api[ _-]?key|api[ _-]?key (is )?(missing|invalid|not (set|found|valid))|(token|session|login|credentials?) (has )?expired|refresh token|re-?authenticate|no credentials/i;
const RATE_PATTERN = /rate[ _-]?limit|status:? *429\b|too many requests|quota (exceeded|exhausted)|resource[ _-]?exhausted|usage limit|exceeded your (current )?quota|overloaded/i;

/** Whether the run ended well: a result, not stopped, and the tool was started at all. */
export function succeeded(exit: JsonlExit): exit is JsonlExit & { outcome: { kind: 'result' } } {
  return !exit.aborted && !exit.spawnError && exit.outcome.kind === 'result';
}

/** The error for a run that did not succeed (see `succeeded`). */
export function failureFor(ctx: FailureContext, exit: JsonlExit): MaestroError {
  const sessionId = exit.outcome.sessionId;
  const details = {
    tool: ctx.name, exitCode: exit.code, signal: exit.signal, stderr: exit.stderr, sessionId,
    lines: exit.diagnostics.lines, malformed: exit.diagnostics.malformed, unknownTypes: exit.diagnostics.unknownTypes,
  };
  if (exit.aborted) return new MaestroError('INTERRUPTED', `${ctx.name} was stopped`, { details });
  if (exit.spawnError) {
    const missing = exit.spawnError.code === 'ENOENT' || exit.spawnError.code === 'EACCES';
    return missing
      ? new MaestroError('AGENT_NOT_INSTALLED', `${ctx.name} is not installed: cannot run "${ctx.file}" (${exit.spawnError.code}). Install it, or set provider.executable in the project config.`, { details })
      : new MaestroError('AGENT_FAILED', `cannot start ${ctx.name} (${ctx.file}): ${exit.spawnError.message}`, { details, cause: exit.spawnError });
  }
  const reported = exit.outcome.kind === 'error' ? exit.outcome.message : '';
  const evidence = [reported, ...exit.stderr].join('\n');
  const stderrLine = exit.stderr.length ? `; last stderr: ${exit.stderr.join(' | ')}` : '';
  if ((exit.code !== null && ctx.loginExitCodes?.includes(exit.code)) || LOGIN_PATTERN.test(evidence)) {
    return new MaestroError('AGENT_LOGIN_REQUIRED', `${ctx.name} is not logged in or its login expired (${firstLine(reported || exit.stderr.at(-1) || `exit ${exit.code}`)}). To log in: ${ctx.loginHint}; then retry the task.`, { details });
  }
  if (RATE_PATTERN.test(evidence)) {
    return new MaestroError('AGENT_RATE_LIMITED', `${ctx.name} was rate limited by its model provider: ${firstLine(reported || exit.stderr.at(-1) || '')}`, { details });
  }
  if (exit.outcome.kind === 'error') return new MaestroError('AGENT_FAILED', `${ctx.name} failed: ${reported}${stderrLine}`, { details });
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with ${exit.code}`;
  const malformed = exit.diagnostics.malformed.length ? `; lines that were not JSON: ${exit.diagnostics.malformed.map((m) => m.line).join(', ')}` : '';
  return new MaestroError('AGENT_STREAM_BROKEN', `${ctx.name} ended without a result: it ${how} after ${exit.diagnostics.lines} line(s) of output${malformed}${stderrLine || '; stderr was empty'}`, { details });
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
