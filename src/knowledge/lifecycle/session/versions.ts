/**
 * `session.json` and `run.json` of every version (FORMATS §3.2, §3.3), read the way maestro-flow
 * reads them (its src/run/schemas.ts and src/run/v3/migrate-v3.ts at v0.5.79):
 *
 * - current (`session/3.0`, `run/3.0`): read as written; keys we do not model are kept.
 * - older (`session/1.0`–`1.3`, `session/2.0`, `command-run/1.0`–`1.4`): mapped onto 3.0 as
 *   maestro-flow's v3 migration maps them (intent → objective, output.verdict `ready` → `done`, …).
 *   maestro-flow keeps the whole old file in a snapshot beside the migrated one; we keep, in the
 *   rewritten file itself, every key the mapping does not consume (topic_identity, identity_revision,
 *   current_execution_id, handoff, …). Consumed = copied under its new name: `intent`,
 *   `chain_step_id`, `completed_at` of a command-run.
 * - any other version (a newer maestro-flow's `session/4.0`, `run/3.1`): read as written, for
 *   display, and never rewritten. maestro-flow reads unknown versions through unvalidated and
 *   refuses to replace a file that is not at the version it writes; `assertRewritable` is ours.
 *
 * A known field holding a value of the wrong type makes the file corrupt: CORRUPT_FILE naming the
 * file and the field, before anything is written (`Number("zzz")` used to go back to disk as null).
 */
import { MaestroError } from '../../../core/errors.js';

export const SESSION_SCHEMA = 'session/3.0';
export const RUN_SCHEMA = 'run/3.0';
const SESSION_OLDER = ['session/1.0', 'session/1.1', 'session/1.2', 'session/1.3', 'session/2.0'];
const RUN_OLDER = ['command-run/1.0', 'command-run/1.1', 'command-run/1.2', 'command-run/1.3', 'command-run/1.4'];

export type SessionStatus = 'open' | 'completed' | 'archived' | 'failed';
export type RunStatus = 'pending' | 'running' | 'blocked' | 'completed' | 'failed' | 'cancelled' | 'sealed';
type Verdict = 'done' | 'done_with_concerns' | 'needs_retry' | 'blocked';

/** A session as Maestro works with it. `schema_version` is SESSION_SCHEMA unless the file is of a version we do not know. */
export interface SessionDoc {
  schema_version: string;
  session_id: string;
  objective: string;
  definition_of_done: string;
  status: SessionStatus;
  orchestration_revision: number;
  activity_revision: number;
  chain: unknown[];
  decisions: unknown[];
  active_run_ids: string[];
  artifacts_ref: string;
  evidence_ref: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  archived_at: string | null;
}

/** A run as Maestro works with it. `schema_version` is RUN_SCHEMA unless the file is of a version we do not know. */
export interface RunDoc {
  schema_version: string;
  run_id: string;
  session_id: string;
  step_id: string;
  parent_run_id: string | null;
  retry_of_run_id: string | null;
  attempt: number;
  command: string;
  args: string[];
  goal: string | null;
  status: RunStatus;
  revision: number;
  actor_id: string;
  input_refs: string[];
  output_refs: string[];
  primary_artifact_id: string | null;
  verdict: Verdict | null;
  summary: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  sealed_at: string | null;
}

type Raw = Record<string, unknown>;
const nowIso = () => new Date().toISOString();

/** The value at a dotted path (`output.verdict`); undefined when any step is missing or not an object. */
function at(raw: Raw, path: string): unknown {
  let v: unknown = raw;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Raw)[k] : undefined;
  return v;
}

/**
 * Typed readers for one file's fields. An absent field (undefined) takes the fallback; a present
 * one of the wrong type throws CORRUPT_FILE, or, in a file we only display (`strict` false), takes
 * the fallback too.
 */
function fieldsOf(raw: Raw, file: string, strict: boolean) {
  const read = <T>(path: string, want: string, ok: (v: unknown) => boolean, fallback: T): T => {
    const v = at(raw, path);
    if (v === undefined) return fallback;
    if (ok(v)) return v as T;
    if (!strict) return fallback;
    throw new MaestroError('CORRUPT_FILE', `${file}: field ${path} must be ${want}, found ${JSON.stringify(v)}. Fix the value or restore the file; Maestro changed nothing.`, { details: { file, field: path } });
  };
  const isString = (v: unknown) => typeof v === 'string';
  return {
    has: (path: string) => at(raw, path) !== undefined,
    str: (path: string, fallback: string) => read(path, 'a string', isString, fallback),
    strOrNull: (path: string) => read<string | null>(path, 'a string or null', (v) => v === null || isString(v), null),
    count: (path: string, min: number, fallback: number) => read(path, `a whole number ≥ ${min}`, (v) => Number.isSafeInteger(v) && (v as number) >= min, fallback),
    list: (path: string) => read<unknown[]>(path, 'an array', Array.isArray, []),
    strings: (path: string) => read<string[]>(path, 'an array of strings', (v) => Array.isArray(v) && v.every(isString), []),
    oneOf: <T extends string>(path: string, values: readonly T[], fallback: T) => read<T>(path, `one of ${values.join('|')}`, (v) => values.includes(v as T), fallback),
    oneOfOrNull: <T extends string>(path: string, values: readonly T[]) => read<T | null>(path, `null or one of ${values.join('|')}`, (v) => v === null || values.includes(v as T), null),
  };
}
type Fields = ReturnType<typeof fieldsOf>;

/** The file's own keys minus the ones a mapping consumed, then the mapped fields (keys keep the file's order). */
function keepRest(raw: Raw, consumed: string[], mapped: object): Raw {
  const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => !consumed.includes(k)));
  return { ...rest, ...mapped };
}

// ── sessions ──────────────────────────────────────────────────────────────────────────────────────

const SESSION_STATUSES = ['open', 'completed', 'archived', 'failed'] as const;
/** session/1.x statuses as maestro-flow's migration projects them (a paused session is open). */
const V1_STATUS: Record<string, SessionStatus> = { running: 'open', paused: 'open', sealed: 'completed', archived: 'archived', failed: 'failed' };

type SessionPart = Pick<SessionDoc, 'objective' | 'definition_of_done' | 'status' | 'orchestration_revision' | 'artifacts_ref' | 'evidence_ref' | 'completed_at' | 'archived_at'> & { consumed: string[] };

function sessionV3(f: Fields): SessionPart {
  // A pre-simplification session/3.0 may still say `paused`: maestro-flow reads it as open.
  const status = f.oneOf('status', [...SESSION_STATUSES, 'paused'] as const, 'open');
  return {
    objective: f.str('objective', ''),
    definition_of_done: f.str('definition_of_done', ''),
    status: status === 'paused' ? 'open' : status,
    orchestration_revision: f.count('orchestration_revision', 0, 0),
    artifacts_ref: f.str('artifacts_ref', 'artifacts.json'),
    evidence_ref: f.str('evidence_ref', 'evidence.json'),
    completed_at: f.strOrNull('completed_at'),
    archived_at: f.strOrNull('archived_at'),
    consumed: [],
  };
}

/**
 * session/2.0 is statusless: archived when archived_at is set, else completed once a run completed.
 * (maestro-flow's migration reads the status off the session's execution file instead; we read no
 * executions, so a 2.0 session with a completed run and a still-active execution reads as completed.)
 */
function sessionV2(f: Fields): SessionPart {
  const fromIntent = !f.has('objective');
  const archivedAt = f.strOrNull('archived_at');
  return {
    ...sessionV3(f),
    objective: fromIntent ? f.str('intent', '') : f.str('objective', ''),
    status: archivedAt ? 'archived' : f.strOrNull('latest_completed_run_id') ? 'completed' : 'open',
    consumed: fromIntent ? ['intent'] : [],
  };
}

/** session/1.x: status, intent, boundary_contract, refs and lifecycle.sealed_at, as maestro-flow's migration reads them. */
function sessionV1(f: Fields): SessionPart {
  const fromIntent = !f.has('objective');
  const status = V1_STATUS[f.oneOf('status', Object.keys(V1_STATUS), 'running')]!;
  const sealedAt = f.strOrNull('lifecycle.sealed_at');
  const pick = (own: string, legacy: string, fallback: string) => (f.has(own) ? f.str(own, fallback) : f.str(legacy, fallback));
  return {
    objective: fromIntent ? f.str('intent', '') : f.str('objective', ''),
    definition_of_done: pick('definition_of_done', 'boundary_contract.definition_of_done', ''),
    status,
    orchestration_revision: f.count('orchestration_revision', 0, f.count('activity_revision', 0, 0)),
    artifacts_ref: pick('artifacts_ref', 'refs.artifacts', 'artifacts.json'),
    evidence_ref: pick('evidence_ref', 'refs.evidence', 'evidence.json'),
    completed_at: f.strOrNull('completed_at') ?? (status === 'completed' || status === 'failed' ? sealedAt : null),
    archived_at: f.strOrNull('archived_at') ?? (status === 'archived' ? sealedAt : null),
    consumed: fromIntent ? ['intent'] : [],
  };
}

/** Any session.json as a SessionDoc: current as written, older mapped, unknown versions read for display. */
export function upgradeSession(raw: Raw, file: string): SessionDoc {
  if (typeof raw.session_id !== 'string') throw new MaestroError('CORRUPT_FILE', `${file}: field session_id must be a string.`, { details: { file, field: 'session_id' } });
  const version = typeof raw.schema_version === 'string' ? raw.schema_version : '';
  const known = version === SESSION_SCHEMA || SESSION_OLDER.includes(version);
  const f = fieldsOf(raw, file, known);
  const { consumed, ...part } = version === 'session/2.0' ? sessionV2(f) : version.startsWith('session/1.') && known ? sessionV1(f) : sessionV3(f);
  const created = f.str('created_at', nowIso());
  return keepRest(raw, consumed, {
    schema_version: known ? SESSION_SCHEMA : version,
    session_id: raw.session_id,
    ...part,
    activity_revision: f.count('activity_revision', 0, 0),
    chain: f.list('chain'),
    decisions: f.list('decisions'),
    active_run_ids: f.strings('active_run_ids'),
    created_at: created,
    updated_at: f.str('updated_at', created),
  }) as unknown as SessionDoc;
}

// ── runs ──────────────────────────────────────────────────────────────────────────────────────────

const RUN_STATUSES = ['pending', 'running', 'blocked', 'completed', 'failed', 'cancelled', 'sealed'] as const;
const VERDICTS = ['done', 'done_with_concerns', 'needs_retry', 'blocked'] as const;
/** command-run/1.x output.verdict → run/3.0 verdict (maestro-flow's migration: anything else needs a retry). */
const V1_VERDICT: Record<string, Verdict> = { ready: 'done', ready_with_concerns: 'done_with_concerns', blocked: 'blocked', failed: 'needs_retry' };

type RunPart = Omit<RunDoc, 'schema_version' | 'run_id' | 'session_id' | 'parent_run_id' | 'retry_of_run_id' | 'attempt' | 'revision' | 'actor_id' | 'goal' | 'sealed_at'> & { consumed: string[] };

function runV3(f: Fields): RunPart {
  return {
    step_id: f.str('step_id', 'step-1'),
    command: f.str('command', ''),
    args: f.strings('args'),
    status: f.oneOf('status', RUN_STATUSES, 'running'),
    input_refs: f.strings('input_refs'),
    output_refs: f.strings('output_refs'),
    primary_artifact_id: f.strOrNull('primary_artifact_id'),
    verdict: f.oneOfOrNull('verdict', VERDICTS),
    summary: f.strOrNull('summary'),
    created_at: f.str('created_at', nowIso()),
    started_at: f.strOrNull('started_at'),
    ended_at: f.strOrNull('ended_at'),
    consumed: [],
  };
}

/**
 * command-run/1.x as maestro-flow's migration projects it: command.name, input.args/consumes,
 * output.produces (+ handoff.artifact_refs), output.verdict, handoff.summary, chain_step_id,
 * completed_at → ended_at; a `created` run is pending and has not started.
 */
function runV1(f: Fields, runId: string): RunPart {
  const legacy = f.oneOf('status', ['created', ...RUN_STATUSES] as const, 'running');
  const stepFromChain = !f.has('step_id') && typeof f.strOrNull('chain_step_id') === 'string';
  const endedFromCompleted = !f.has('ended_at') && f.has('completed_at');
  const started = f.strOrNull('started_at');
  const verdict = f.oneOfOrNull('output.verdict', Object.keys(V1_VERDICT));
  return {
    step_id: stepFromChain ? f.str('chain_step_id', '') : f.str('step_id', `legacy-run-${runId}`),
    command: f.has('command.name') ? f.str('command.name', '') : f.str('command', ''),
    args: f.has('args') ? f.strings('args') : f.strings('input.args'),
    status: legacy === 'created' ? 'pending' : legacy,
    input_refs: f.has('input_refs') ? f.strings('input_refs') : f.strings('input.consumes'),
    output_refs: f.has('output_refs') ? f.strings('output_refs') : [...new Set([...f.strings('output.produces'), ...f.strings('handoff.artifact_refs')])],
    primary_artifact_id: f.has('primary_artifact_id') ? f.strOrNull('primary_artifact_id') : f.strOrNull('output.primary_artifact_id'),
    verdict: f.has('verdict') ? f.oneOfOrNull('verdict', VERDICTS) : verdict === null ? null : V1_VERDICT[verdict]!,
    summary: f.has('summary') ? f.strOrNull('summary') : f.strOrNull('handoff.summary'),
    created_at: f.str('created_at', started ?? nowIso()),
    started_at: legacy === 'created' ? null : started,
    ended_at: endedFromCompleted ? f.strOrNull('completed_at') : f.strOrNull('ended_at'),
    consumed: [...(stepFromChain ? ['chain_step_id'] : []), ...(endedFromCompleted ? ['completed_at'] : [])],
  };
}

/** Any run.json as a RunDoc: current as written, older mapped, unknown versions read for display. */
export function upgradeRun(raw: Raw, file: string): RunDoc {
  if (typeof raw.run_id !== 'string' || typeof raw.session_id !== 'string') throw new MaestroError('CORRUPT_FILE', `${file}: fields run_id and session_id must be strings.`, { details: { file } });
  const version = typeof raw.schema_version === 'string' ? raw.schema_version : '';
  const known = version === RUN_SCHEMA || RUN_OLDER.includes(version);
  const f = fieldsOf(raw, file, known);
  const { consumed, ...part } = known && version !== RUN_SCHEMA ? runV1(f, raw.run_id) : runV3(f);
  return keepRest(raw, consumed, {
    schema_version: known ? RUN_SCHEMA : version,
    run_id: raw.run_id,
    session_id: raw.session_id,
    parent_run_id: f.strOrNull('parent_run_id'),
    retry_of_run_id: f.strOrNull('retry_of_run_id'),
    attempt: f.count('attempt', 1, 1),
    goal: f.strOrNull('goal'),
    revision: f.count('revision', 0, 0),
    actor_id: f.str('actor_id', 'maestro'),
    sealed_at: f.strOrNull('sealed_at'),
    ...part,
  }) as unknown as RunDoc;
}

// ── rewriting ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Refuses to rewrite a file of a version we do not know, before anything is changed. A newer
 * version belongs to the newer maestro-flow that wrote it (SCHEMA_TOO_NEW, as for a newer
 * database); anything else is not a version either tool writes (CORRUPT_FILE).
 */
export function assertRewritable(kind: 'session' | 'run', doc: { schema_version: string }, file: string): void {
  const [current, older] = kind === 'session' ? [SESSION_SCHEMA, SESSION_OLDER] : [RUN_SCHEMA, RUN_OLDER];
  const v = doc.schema_version;
  if (v === current) return;
  const [major, minor] = current.slice(kind.length + 1).split('.').map(Number) as [number, number];
  const m = new RegExp(`^${kind}/(\\d+)\\.(\\d+)$`).exec(v);
  if (m && (Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) > minor)))
    throw new MaestroError('SCHEMA_TOO_NEW', `${file} is ${v}, newer than this Maestro knows (it writes ${current}). The newer maestro-flow that wrote it owns the file: Maestro will not rewrite it and changed nothing. Upgrade Maestro, or do this step with that tool.`, { details: { file, schema_version: v, known: current } });
  throw new MaestroError('CORRUPT_FILE', `${file}: schema_version ${JSON.stringify(v)} is not a version Maestro reads (${[...older, current].join(', ')}); Maestro will not rewrite it and changed nothing. Fix schema_version or restore the file.`, { details: { file, schema_version: v } });
}
