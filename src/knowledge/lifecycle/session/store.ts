/**
 * Sessions and runs on disk (FORMATS §3): `.workflow/sessions/<sid>/session.json`
 * (`session/3.0`) and `runs/<run-id>/run.json` (`run/3.0`). Older versions are
 * read and mapped, keeping the keys the mapping does not consume; we always write
 * the current one, and never rewrite a file of a version we do not know (versions.ts:
 * a newer maestro-flow's file is refused before anything changes). A run's folder may be a
 * symlink to the orchestrator's run directory (bridge.ts): the ledger then
 * lives next to the agent's transcript and is still found through the session.
 * A sealed run is immutable: every writer goes through `assertWritableRun`.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMaestroError, MaestroError } from '../../../core/errors.js';
import { settleWrite, writeFileAtomic, writtenNow, writtenOffLoop, type FileWrite } from '../../format/atomic.js';
import { withCorpusLock, withCorpusLockAsync } from '../../format/lock.js';
import { canonical } from '../../../lib/paths.js';
import { assertInsideRoot, type WorkflowRoot } from '../../format/root.js';
import { readJsonObject } from '../jsonFile.js';
import { REPORT_TEMPLATE } from './report.js';
import { assertRewritable, RUN_SCHEMA, SESSION_SCHEMA, upgradeRun, upgradeSession, type RunDoc, type SessionDoc } from './versions.js';

import { assertReadableInside, assertRunFolderInside, assertRunsInside, assertSessionInside, assertSourceInside, ID_RE, runDir, sessionDir, sessionsDir } from './folders.js';

export { assertReadableInside, assertRunFolderInside, assertSegment, assertSessionInside, assertSourceInside, orchestratorRunsDir, runDir, runFolderOutside, runLedgerPath, sessionDir, sessionLedgerPath, sessionsDir, type RunFolderUse } from './folders.js';
export { RUN_SCHEMA, SESSION_SCHEMA, upgradeRun, upgradeSession, type RunDoc, type RunStatus, type SessionDoc, type SessionStatus } from './versions.js';


const nowIso = () => new Date().toISOString();

/**
 * The store's lock, made in sessions/ (FORMATS §6 `.session-store.lock`): held by every read-modify-write of a
 * session.json, a run.json or `.active-run` (run creation here, a run's end and a session's seal in ops.ts), from
 * the read to the rename, so another process's change in between is neither lost nor its fixed temporary file
 * taken. Its callers hold the folder they write in to the write rule before they take it.
 */
export function storeLock<T>(root: WorkflowRoot, fn: () => T): T {
  return withCorpusLock([storeLockTarget(root)], fn);
}
/** The store lock's target, for a caller that takes it with other locks at once (ops.ts runEndLocks). */
export const storeLockTarget = (root: WorkflowRoot) => join(sessionsDir(root), '.session-store');

const sessionFile = (root: WorkflowRoot, sid: string) => join(sessionDir(root, sid), 'session.json');
const runFile = (root: WorkflowRoot, sid: string, rid: string) => join(runDir(root, sid, rid), 'run.json');
const activeRunFile = (root: WorkflowRoot) => join(sessionsDir(root), '.active-run');

/** Call before an operation's first change when it will rewrite session.json: refuses a version we do not know. */
export function assertSessionRewritable(root: WorkflowRoot, s: SessionDoc): void {
  assertRewritable('session', s, sessionFile(root, s.session_id));
}
/** Call before an operation's first change when it will rewrite run.json: refuses a version we do not know. */
export function assertRunRewritable(root: WorkflowRoot, run: RunDoc): void {
  assertRewritable('run', run, runFile(root, run.session_id, run.run_id));
}

/**
 * What to do about a session that is not there. A task's (`task-t-…`, bridge.ts sessionIdFor) is made by its first run in
 * its project's repository: creating one elsewhere, as the plain hint said, would only hide that the folder is the wrong one.
 */
function missingSessionHint(sid: string): string {
  const task = /^task-(t-[0-9a-z]+)$/.exec(sid)?.[1];
  if (!task) return `maestro session create ${sid}`;
  return `a task's session is in its project's repository, made when its first run starts: run this there, or pass --workflow-root <the project's folder> (maestro task show ${task.replace('-', '_')} names the command with it)`;
}

export function readSession(root: WorkflowRoot, sid: string): SessionDoc {
  const file = sessionFile(root, sid);
  assertReadableInside(root, file);
  settleWrite(file); // a run end's write of it in flight (ops.ts completeAndSeal) is finished first
  if (!existsSync(file)) throw new MaestroError('UNKNOWN_SESSION', `No session ${sid} under ${sessionsDir(root)} (${missingSessionHint(sid)}).`);
  return upgradeSession(readJsonObject(file), file);
}


export function writeSession(root: WorkflowRoot, doc: SessionDoc): void {
  const w = sessionWrite(root, doc);
  writeFileAtomic(w.file, w.text);
}

/** writeSession's checks and new text, the write left to the caller (ops.ts completeAndSeal writes it off the loop). */
export function sessionWrite(root: WorkflowRoot, doc: SessionDoc): FileWrite {
  assertSessionRewritable(root, doc);
  assertSessionInside(root, doc.session_id);
  doc.updated_at = nowIso();
  return { file: sessionFile(root, doc.session_id), text: `${JSON.stringify(doc, null, 2)}\n` };
}

export function createSession(root: WorkflowRoot, sid: string, objective = ''): { session: SessionDoc; created: boolean } {
  sessionToCreate(root, sid);
  return storeLock(root, () => writtenNow(sessionCreation(root, sid, objective)));
}

/** createSession for the daemon's run start (bridge.ts): session.json's fsyncs awaited off the event loop, the store's lock held. */
export async function createSessionOffLoop(root: WorkflowRoot, sid: string, objective = ''): Promise<{ session: SessionDoc; created: boolean }> {
  sessionToCreate(root, sid);
  return withCorpusLockAsync([storeLockTarget(root)], () => writtenOffLoop(sessionCreation(root, sid, objective)));
}

/** createSession's checks before the lock and the first folder: the id is a path segment, and a session folder a link sends out of the repository gets nothing. */
function sessionToCreate(root: WorkflowRoot, sid: string): void {
  sessionDir(root, sid);
  assertSessionInside(root, sid);
}

/** Under the store's lock: the session's folder, then its session.json, yielded to be written; the session there already, else. */
function* sessionCreation(root: WorkflowRoot, sid: string, objective: string): Generator<FileWrite, { session: SessionDoc; created: boolean }, void> {
  const dir = sessionDir(root, sid);
  settleWrite(sessionFile(root, sid)); // one being created in this process is there
  if (existsSync(join(dir, 'session.json'))) return { session: readSession(root, sid), created: false };
  mkdirSync(join(dir, 'runs'), { recursive: true });
  const now = nowIso();
  const doc: SessionDoc = { schema_version: SESSION_SCHEMA, session_id: sid, objective, definition_of_done: '', status: 'open', orchestration_revision: 0, activity_revision: 0, chain: [], decisions: [], active_run_ids: [], artifacts_ref: 'artifacts.json', evidence_ref: 'evidence.json', created_at: now, updated_at: now, completed_at: null, archived_at: null };
  yield sessionWrite(root, doc);
  return { session: doc, created: true };
}

export interface SessionListing {
  sessions: SessionDoc[];
  /** Each folder under sessions/ that does not read as a session, with why (audit reports these as invalid-session-authority). */
  unreadable: Array<{ session_id: string; error: string }>;
}

/** The sessions that read, sorted by id, and every other folder under sessions/ with the reason it does not read. */
export function scanSessions(root: WorkflowRoot): SessionListing {
  const dir = sessionsDir(root);
  const listing: SessionListing = { sessions: [], unreadable: [] };
  if (!existsSync(dir)) return listing;
  assertReadableInside(root, dir); // sessions/ itself linked out: nothing under it is listed
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, e.name, 'session.json');
    if (e.isSymbolicLink()) {
      // Never followed out of .workflow/: named, with why, like a session that does not read.
      const out = linkOutReason(root, join(dir, e.name));
      if (out) listing.unreadable.push({ session_id: e.name, error: out });
      continue;
    }
    if (!e.isDirectory()) continue;
    if (ID_RE.test(e.name) && !existsSync(file)) {
      listing.unreadable.push({ session_id: e.name, error: `${file} is missing.` });
      continue;
    }
    try {
      listing.sessions.push(readSession(root, e.name)); // a folder name that is not a session id is refused here, saying so
    } catch (err) {
      listing.unreadable.push({ session_id: e.name, error: (err as Error).message });
    }
  }
  listing.sessions.sort((a, b) => a.session_id.localeCompare(b.session_id));
  listing.unreadable.sort((a, b) => a.session_id.localeCompare(b.session_id));
  return listing;
}

/** Why reading `path` is refused (it links out of the workflow root), or null. */
function linkOutReason(root: WorkflowRoot, path: string): string | null {
  try {
    assertReadableInside(root, path);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The sessions that read; `scanSessions` also says which folders do not, and why. */
export function listSessions(root: WorkflowRoot): SessionDoc[] {
  return scanSessions(root).sessions;
}

/** Run ids of a session; run folders may be symlinks into the orchestrator's run directories. */
export function listRunIds(root: WorkflowRoot, sid: string): string[] {
  const dir = join(sessionDir(root, sid), 'runs');
  assertReadableInside(root, dir); // runs/ itself stays inside; a run folder below it may link out (linkTo)
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

export function readRun(root: WorkflowRoot, sid: string, rid: string): RunDoc {
  // Not through a run link a repository planted (its run.json, or a file beside it, may be anyone's).
  assertRunFolderInside(root, sid, rid);
  const file = runFile(root, sid, rid);
  settleWrite(file); // a run end's write of it in flight (ops.ts completeAndSeal) is finished first
  if (!existsSync(file)) throw new MaestroError('UNKNOWN_RUN', `No run ${rid} in session ${sid} (${file}).`);
  return readRunFile(file);
}

/** A run.json found by path (the orchestrator's run directory, `$MAESTRO_RUN_DIR`); CORRUPT_FILE naming it when it is not a run. */
export function readRunFile(file: string): RunDoc {
  settleWrite(file);
  return upgradeRun(readJsonObject(file), file);
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
  const w = runWrite(root, run);
  writeFileAtomic(w.file, w.text);
}

/** writeRun's checks and new text, the write left to the caller (ops.ts completeAndSeal writes it off the loop). */
export function runWrite(root: WorkflowRoot, run: RunDoc): FileWrite {
  assertRunRewritable(root, run);
  assertSessionInside(root, run.session_id);
  run.revision += 1;
  return { file: runFile(root, run.session_id, run.run_id), text: `${JSON.stringify(run, null, 2)}\n` };
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
  const rid = runToCreate(root, sid, opts);
  return storeLock(root, () => writtenNow(runCreation(root, sid, rid, opts)));
}

/**
 * createRun for the daemon's run start (bridge.ts): the same files in the same order, run.json's and session.json's
 * fsyncs awaited off the event loop (4 of a run's 16 fsyncs, bench:daemon 2026-12), the store's lock held until
 * both are written (lock.ts withCorpusLockAsync).
 */
export async function createRunOffLoop(root: WorkflowRoot, sid: string, opts: CreateRunOptions = {}): Promise<{ run: RunDoc; created: boolean }> {
  const rid = runToCreate(root, sid, opts);
  return withCorpusLockAsync([storeLockTarget(root)], () => writtenOffLoop(runCreation(root, sid, rid, opts)));
}

/** createRun's checks before the lock: the session is open and rewritable, its runs/ stays inside; the run's id. */
function runToCreate(root: WorkflowRoot, sid: string, opts: CreateRunOptions): string {
  const session = readSession(root, sid);
  assertSessionRewritable(root, session);
  if (session.status !== 'open') throw new MaestroError('ILLEGAL_TRANSITION', `Session ${sid} is ${session.status}; runs can only be created in an open session.`);
  const rid = opts.runId ?? newRunId(`${sid}:${nowIso()}:${process.pid}:${Math.random()}`);
  runDir(root, sid, rid); // the id is a path segment
  assertRunsInside(root, sid); // before the lock, and before runs/ is made or a link put in it
  return rid;
}

/** Under the store's lock: the run's folder and run.json, then the session's active runs; yields the two writes. */
function* runCreation(root: WorkflowRoot, sid: string, rid: string, opts: CreateRunOptions): Generator<FileWrite, { run: RunDoc; created: boolean }, void> {
  const dir = runDir(root, sid, rid);
  if (existsSync(join(dir, 'run.json'))) return { run: readRun(root, sid, rid), created: false };
  // Read under the lock, before the first change: a session replaced meanwhile by a newer tool stops here.
  assertSessionRewritable(root, readSession(root, sid));
  if (opts.linkTo) linkRunFolder(root, sid, rid, resolve(opts.linkTo));
  else {
    assertSourceInside(root, sid, rid, 'write'); // a link a repository planted there is not written through
    mkdirSync(dir, { recursive: true });
  }
  const now = nowIso();
  const run: RunDoc = { schema_version: RUN_SCHEMA, run_id: rid, session_id: sid, step_id: 'step-1', parent_run_id: null, retry_of_run_id: null, attempt: 1, command: opts.command ?? 'manual', args: [], goal: opts.goal ?? null, status: 'running', revision: 0, actor_id: 'maestro', input_refs: [], output_refs: [], primary_artifact_id: null, verdict: null, summary: null, created_at: now, started_at: now, ended_at: null, sealed_at: null };
  yield runWrite(root, run);
  if (!existsSync(join(dir, 'report.md'))) writeFileSync(join(dir, 'report.md'), REPORT_TEMPLATE);
  // Read again after run.json's write, with no await before its own: a change this process made meanwhile is kept.
  const s = readSession(root, sid);
  assertSessionRewritable(root, s);
  s.active_run_ids = [...new Set([...s.active_run_ids, rid])];
  s.activity_revision += 1;
  yield sessionWrite(root, s);
  return { run, created: true };
}

/**
 * Makes run `rid`'s folder a link to `target` (the orchestrator's run directory, chosen by the caller). A link
 * already there is kept when it leads to `target`; one leading anywhere else is held to the run-folder rule
 * (`runFolderOutside`): a repository can plant `runs/<rid>` before the run is created.
 */
function linkRunFolder(root: WorkflowRoot, sid: string, rid: string, target: string): void {
  const dir = runDir(root, sid, rid);
  mkdirSync(target, { recursive: true });
  mkdirSync(join(sessionDir(root, sid), 'runs'), { recursive: true });
  if (!lstatSync(dir, { throwIfNoEntry: false })) symlinkSync(target, dir, 'dir');
  else if (canonical(dir) !== canonical(target)) assertSourceInside(root, sid, rid, 'write');
}

/**
 * The active run: `$MAESTRO_RUN_ID` + `$MAESTRO_SESSION_ID`, else `.workflow/sessions/.active-run` ("<sid> <rid>").
 * The file is read only when it stays inside `.workflow/` (a planted link to a file outside would have its first
 * words taken for ids, and quoted when they are refused as ids).
 */
export function activeRun(root: WorkflowRoot, env: NodeJS.ProcessEnv): { sid: string; rid: string } | null {
  if (env.MAESTRO_SESSION_ID && env.MAESTRO_RUN_ID) return { sid: env.MAESTRO_SESSION_ID, rid: env.MAESTRO_RUN_ID };
  const f = activeRunFile(root);
  assertReadableInside(root, f);
  if (!existsSync(f)) return null;
  const [sid, rid] = readFileSync(f, 'utf8').trim().split(/\s+/);
  return sid && rid ? { sid, rid } : null;
}

/**
 * Clears `.active-run` if it names this run (one being sealed: it takes no more records, so it is no active run).
 * One that links out of `.workflow/` names no run of ours: it is left alone, and the seal goes on.
 */
export function releaseActiveRun(root: WorkflowRoot, sid: string, rid: string): void {
  storeLock(root, () => {
    let a: { sid: string; rid: string } | null;
    try {
      a = activeRun(root, {});
    } catch (err) {
      if (isMaestroError(err, 'PATH_OUTSIDE_PROJECTS')) return;
      throw err;
    }
    if (a && a.sid === sid && a.rid === rid) setActiveRun(root, sid, null);
  });
}

/**
 * Written in place inside `.workflow/`, never through a link (root.ts assertInsideRoot), under the store's lock (its
 * fixed temporary name is the lock holder's; releaseActiveRun reads and clears it under the same lock).
 */
export function setActiveRun(root: WorkflowRoot, sid: string, rid: string | null): void {
  const f = activeRunFile(root);
  assertInsideRoot(root, f);
  mkdirSync(sessionsDir(root), { recursive: true });
  storeLock(root, () => writeFileAtomic(f, rid ? `${sid} ${rid}\n` : ''));
}
