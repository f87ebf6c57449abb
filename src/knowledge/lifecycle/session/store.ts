/**
 * Sessions and runs on disk (FORMATS §3): `.workflow/sessions/<sid>/session.json`
 * (`session/3.0`) and `runs/<run-id>/run.json` (`run/3.0`). Older versions are
 * read and mapped; we always write the current one. A run's folder may be a
 * symlink to the orchestrator's run directory (bridge.ts): the ledger then
 * lives next to the agent's transcript and is still found through the session.
 * A sealed run is immutable: every writer goes through `assertWritableRun`.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { writeFileAtomic } from '../../format/atomic.js';
import { withCorpusLock } from '../../format/lock.js';
import type { WorkflowRoot } from '../../format/root.js';
import { REPORT_TEMPLATE } from './report.js';

export const SESSION_SCHEMA = 'session/3.0';
export const RUN_SCHEMA = 'run/3.0';

export type SessionStatus = 'open' | 'completed' | 'archived' | 'failed';
export type RunStatus = 'pending' | 'running' | 'blocked' | 'completed' | 'failed' | 'cancelled' | 'sealed';

export interface SessionDoc {
  schema_version: typeof SESSION_SCHEMA;
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

export interface RunDoc {
  schema_version: typeof RUN_SCHEMA;
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
  verdict: 'done' | 'done_with_concerns' | 'needs_retry' | 'blocked' | null;
  summary: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  sealed_at: string | null;
}

const ID_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/** Session and run ids are path segments: refuse anything that could escape the workflow root. */
export function assertSegment(kind: string, id: string): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 128 || !ID_RE.test(id) || RESERVED.test(id))
    throw new MaestroError('BAD_INPUT', `${kind} id ${JSON.stringify(id)} must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (≤128 chars); it is used as a folder name under .workflow/sessions/.`);
}

export function sessionsDir(root: WorkflowRoot): string {
  return join(root.workflowDir, 'sessions');
}
export function sessionDir(root: WorkflowRoot, sid: string): string {
  assertSegment('session', sid);
  return join(sessionsDir(root), sid);
}
export function runDir(root: WorkflowRoot, sid: string, rid: string): string {
  assertSegment('run', rid);
  return join(sessionDir(root, sid), 'runs', rid);
}
export const sessionLedgerPath = (root: WorkflowRoot, sid: string) => join(sessionDir(root, sid), 'knowledge-delta.json');
export const runLedgerPath = (root: WorkflowRoot, sid: string, rid: string) => join(runDir(root, sid, rid), 'knowledge-delta.json');

const nowIso = () => new Date().toISOString();

function readJson(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new MaestroError('CORRUPT_FILE', `${file}: not valid JSON (${(err as Error).message}).`, { details: { file }, cause: err });
  }
}

function storeLock<T>(root: WorkflowRoot, fn: () => T): T {
  return withCorpusLock([join(sessionsDir(root), '.session-store')], fn);
}

const SESSION_KEYS = new Set(['schema_version', 'session_id', 'objective', 'definition_of_done', 'status', 'orchestration_revision', 'activity_revision', 'chain', 'decisions', 'active_run_ids', 'artifacts_ref', 'evidence_ref', 'created_at', 'updated_at', 'completed_at', 'archived_at']);
const RUN_KEYS = new Set(['schema_version', 'run_id', 'session_id', 'step_id', 'parent_run_id', 'retry_of_run_id', 'attempt', 'command', 'args', 'goal', 'status', 'revision', 'actor_id', 'input_refs', 'output_refs', 'primary_artifact_id', 'verdict', 'summary', 'created_at', 'started_at', 'ended_at', 'sealed_at']);

/**
 * Keys of a current-version file that this reader does not model (maestro-flow's run files carry
 * `command_contract_hash`, newer versions add more): kept, so rewriting the file never drops them.
 * An older version being upgraded keeps none: its keys belong to the old layout.
 */
function keysWeDoNotKnow(raw: Record<string, unknown>, sameVersion: boolean, known: Set<string>): Record<string, unknown> {
  if (!sameVersion) return {};
  return Object.fromEntries(Object.entries(raw).filter(([k]) => !known.has(k)));
}

/** Maps session/1.x and 2.0 onto the 3.0 shape (unknown versions pass through as open). */
export function upgradeSession(raw: Record<string, unknown>, file: string): SessionDoc {
  const v = String(raw.schema_version ?? '');
  if (typeof raw.session_id !== 'string') throw new MaestroError('CORRUPT_FILE', `${file}: field session_id must be a string.`, { details: { file } });
  let status: SessionStatus = 'open';
  const s = String(raw.status ?? '');
  if (v === SESSION_SCHEMA) status = (['open', 'completed', 'archived', 'failed'].includes(s) ? s : s === 'paused' ? 'open' : 'open') as SessionStatus;
  else if (v.startsWith('session/1.')) status = s === 'sealed' ? 'completed' : s === 'archived' ? 'archived' : s === 'failed' ? 'failed' : 'open';
  else if (v === 'session/2.0') status = raw.archived_at ? 'archived' : raw.latest_completed_run_id ? 'completed' : 'open';
  const created = String(raw.created_at ?? raw.createdAt ?? nowIso());
  return {
    schema_version: SESSION_SCHEMA,
    session_id: raw.session_id,
    objective: String(raw.objective ?? raw.intent ?? raw.topic ?? ''),
    definition_of_done: String(raw.definition_of_done ?? ''),
    status,
    orchestration_revision: Number(raw.orchestration_revision ?? 0),
    activity_revision: Number(raw.activity_revision ?? 0),
    chain: Array.isArray(raw.chain) ? raw.chain : [],
    decisions: Array.isArray(raw.decisions) ? raw.decisions : [],
    active_run_ids: Array.isArray(raw.active_run_ids) ? (raw.active_run_ids as string[]) : [],
    artifacts_ref: String(raw.artifacts_ref ?? 'artifacts.json'),
    evidence_ref: String(raw.evidence_ref ?? 'evidence.json'),
    created_at: created,
    updated_at: String(raw.updated_at ?? created),
    completed_at: (raw.completed_at as string | null) ?? ((raw.lifecycle as { sealed_at?: string } | undefined)?.sealed_at ?? null),
    archived_at: (raw.archived_at as string | null) ?? null,
    ...keysWeDoNotKnow(raw, v === SESSION_SCHEMA, SESSION_KEYS),
  };
}

export function readSession(root: WorkflowRoot, sid: string): SessionDoc {
  const file = join(sessionDir(root, sid), 'session.json');
  if (!existsSync(file)) throw new MaestroError('UNKNOWN_SESSION', `No session ${sid} under ${sessionsDir(root)} (maestro session create ${sid}).`);
  return upgradeSession(readJson(file), file);
}

export function writeSession(root: WorkflowRoot, doc: SessionDoc): void {
  doc.updated_at = nowIso();
  writeFileAtomic(join(sessionDir(root, doc.session_id), 'session.json'), `${JSON.stringify(doc, null, 2)}\n`);
}

export function createSession(root: WorkflowRoot, sid: string, objective = ''): { session: SessionDoc; created: boolean } {
  const dir = sessionDir(root, sid);
  return storeLock(root, () => {
    if (existsSync(join(dir, 'session.json'))) return { session: readSession(root, sid), created: false };
    mkdirSync(join(dir, 'runs'), { recursive: true });
    const now = nowIso();
    const doc: SessionDoc = { schema_version: SESSION_SCHEMA, session_id: sid, objective, definition_of_done: '', status: 'open', orchestration_revision: 0, activity_revision: 0, chain: [], decisions: [], active_run_ids: [], artifacts_ref: 'artifacts.json', evidence_ref: 'evidence.json', created_at: now, updated_at: now, completed_at: null, archived_at: null };
    writeSession(root, doc);
    return { session: doc, created: true };
  });
}

export function listSessions(root: WorkflowRoot): SessionDoc[] {
  const dir = sessionsDir(root);
  if (!existsSync(dir)) return [];
  const out: SessionDoc[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory() || !ID_RE.test(e.name) || !existsSync(join(dir, e.name, 'session.json'))) continue;
    try {
      out.push(readSession(root, e.name));
    } catch {
      // an unreadable session is reported by audit, not here
    }
  }
  return out.sort((a, b) => a.session_id.localeCompare(b.session_id));
}

/** Run ids of a session; run folders may be symlinks into the orchestrator's run directories. */
export function listRunIds(root: WorkflowRoot, sid: string): string[] {
  const dir = join(sessionDir(root, sid), 'runs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => ID_RE.test(n))
    .filter((n) => {
      try {
        return statSync(join(dir, n)).isDirectory();
      } catch {
        return false; // dangling link: the orchestrator's run directory is gone
      }
    })
    .sort();
}

export function upgradeRun(raw: Record<string, unknown>, file: string): RunDoc {
  if (typeof raw.run_id !== 'string' || typeof raw.session_id !== 'string') throw new MaestroError('CORRUPT_FILE', `${file}: fields run_id and session_id must be strings.`, { details: { file } });
  const v = String(raw.schema_version ?? '');
  let status = String(raw.status ?? 'running') as RunStatus;
  if (v.startsWith('command-run/1.') && status === ('created' as RunStatus)) status = 'pending';
  const out: Record<string, unknown> = {
    schema_version: RUN_SCHEMA,
    run_id: raw.run_id,
    session_id: raw.session_id,
    step_id: String(raw.step_id ?? 'step-1'),
    parent_run_id: raw.parent_run_id ?? null,
    retry_of_run_id: raw.retry_of_run_id ?? null,
    attempt: Number(raw.attempt ?? 1),
    command: String(raw.command ?? ''),
    args: Array.isArray(raw.args) ? raw.args : [],
    goal: raw.goal ?? null,
    status,
    revision: Number(raw.revision ?? 0),
    actor_id: String(raw.actor_id ?? 'maestro'),
    input_refs: Array.isArray(raw.input_refs) ? raw.input_refs : [],
    output_refs: Array.isArray(raw.output_refs) ? raw.output_refs : [],
    primary_artifact_id: raw.primary_artifact_id ?? null,
    verdict: raw.verdict ?? null,
    summary: raw.summary ?? null,
    created_at: String(raw.created_at ?? nowIso()),
    started_at: raw.started_at ?? null,
    ended_at: raw.ended_at ?? null,
    sealed_at: raw.sealed_at ?? null,
    ...keysWeDoNotKnow(raw, v === RUN_SCHEMA, RUN_KEYS),
  };
  return out as unknown as RunDoc;
}

export function readRun(root: WorkflowRoot, sid: string, rid: string): RunDoc {
  const file = join(runDir(root, sid, rid), 'run.json');
  if (!existsSync(file)) throw new MaestroError('UNKNOWN_RUN', `No run ${rid} in session ${sid} (${file}).`);
  return upgradeRun(readJson(file), file);
}

export function isSealed(run: RunDoc): boolean {
  return run.status === 'sealed' && run.sealed_at !== null;
}

export function assertWritableRun(root: WorkflowRoot, sid: string, rid: string): RunDoc {
  const run = readRun(root, sid, rid);
  if (isSealed(run)) throw new MaestroError('RUN_SEALED', `Run ${rid} of session ${sid} is sealed (${run.sealed_at}); a sealed run and its ledger are immutable. Stage into another run or the session ledger (--session ${sid} without --run).`);
  return run;
}

export function writeRun(root: WorkflowRoot, run: RunDoc): void {
  run.revision += 1;
  writeFileAtomic(join(runDir(root, run.session_id, run.run_id), 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
}

export interface CreateRunOptions {
  runId?: string;
  command?: string;
  goal?: string;
  /** Real directory for the run (the orchestrator's); the session's `runs/<id>` becomes a symlink to it. */
  linkTo?: string;
}

export function newRunId(requestId: string): string {
  return `run-${createHash('sha256').update(requestId).digest('hex').slice(0, 12)}`;
}

export function createRun(root: WorkflowRoot, sid: string, opts: CreateRunOptions = {}): { run: RunDoc; created: boolean } {
  const session = readSession(root, sid);
  if (session.status !== 'open') throw new MaestroError('ILLEGAL_TRANSITION', `Session ${sid} is ${session.status}; runs can only be created in an open session.`);
  const rid = opts.runId ?? newRunId(`${sid}:${nowIso()}:${process.pid}:${Math.random()}`);
  const dir = runDir(root, sid, rid);
  return storeLock(root, () => {
    if (existsSync(join(dir, 'run.json'))) return { run: readRun(root, sid, rid), created: false };
    if (opts.linkTo) {
      const target = resolve(opts.linkTo);
      mkdirSync(target, { recursive: true });
      mkdirSync(join(sessionDir(root, sid), 'runs'), { recursive: true });
      let exists = false;
      try {
        lstatSync(dir);
        exists = true;
      } catch {
        // not there yet
      }
      if (!exists) symlinkSync(target, dir, 'dir');
    } else mkdirSync(dir, { recursive: true });
    const now = nowIso();
    const run: RunDoc = { schema_version: RUN_SCHEMA, run_id: rid, session_id: sid, step_id: 'step-1', parent_run_id: null, retry_of_run_id: null, attempt: 1, command: opts.command ?? 'manual', args: [], goal: opts.goal ?? null, status: 'running', revision: 0, actor_id: 'maestro', input_refs: [], output_refs: [], primary_artifact_id: null, verdict: null, summary: null, created_at: now, started_at: now, ended_at: null, sealed_at: null };
    writeRun(root, run);
    if (!existsSync(join(dir, 'report.md'))) writeFileSync(join(dir, 'report.md'), REPORT_TEMPLATE);
    const s = readSession(root, sid);
    s.active_run_ids = [...new Set([...s.active_run_ids, rid])];
    s.activity_revision += 1;
    writeSession(root, s);
    return { run, created: true };
  });
}

/** The active run: `$MAESTRO_RUN_ID` + `$MAESTRO_SESSION_ID`, else `.workflow/sessions/.active-run` ("<sid> <rid>"). */
export function activeRun(root: WorkflowRoot, env: NodeJS.ProcessEnv): { sid: string; rid: string } | null {
  if (env.MAESTRO_SESSION_ID && env.MAESTRO_RUN_ID) return { sid: env.MAESTRO_SESSION_ID, rid: env.MAESTRO_RUN_ID };
  const f = join(sessionsDir(root), '.active-run');
  if (!existsSync(f)) return null;
  const [sid, rid] = readFileSync(f, 'utf8').trim().split(/\s+/);
  return sid && rid ? { sid, rid } : null;
}

export function setActiveRun(root: WorkflowRoot, sid: string, rid: string | null): void {
  const f = join(sessionsDir(root), '.active-run');
  mkdirSync(sessionsDir(root), { recursive: true });
  writeFileAtomic(f, rid ? `${sid} ${rid}\n` : '');
}
