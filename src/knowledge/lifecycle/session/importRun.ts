/**
 * A run that ran on another host, brought into this host's session folder from the ledger its daemon stored in the
 * database (store/ops/runKnowledge.ts): a task taken over at review reaches its gate on a daemon whose clone never
 * held the run (the run's folder is in the first daemon's clone, not pushed). The import writes what a run of this
 * host leaves once it is finished: `runs/<run>/run.json` and `knowledge-delta.json` (the stored ledger, its ids and
 * statuses as they were), then reconciles and seals it as the orchestrator does (ops.ts finishRunOffLoop), so the review,
 * promotion, the ledger's checks and the audit treat its candidates as a local run's.
 *
 * Once: a run folder already there (this host ran it, or imported it before) is never written over, so a candidate
 * decided here is not reset. The folder is made under a temporary name and renamed into place, so a reader never
 * sees a run without its ledger and two imports at once leave one. The stored ledger is checked with the ledger's
 * own schema and caps (ledger.ts validateLedger) before anything is written: one that does not read is refused
 * naming the run, and nothing is imported.
 *
 * A ledger may hold a thousand candidates: reconciled at once, they held the daemon's event loop for seconds (1.5 s
 * for 1,000 against 1,000 entries) inside the GET that looked at the task first. So, as for a run of this host
 * (bridge.ts scoreRunAhead), the candidates are scored ahead in slices that give the loop a turn, and the seal's
 * reconcile only decides. Between the rename and the seal the run is in place, unsealed: an import that meets it
 * then seals it (sealIfImported), and whichever comes second finds it sealed.
 */
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { jsonSyntaxWhere } from '../../../lib/jsonError.js';
import type { WorkflowRoot } from '../../format/root.js';
import type { LifecycleContext } from '../context.js';
import { MAX_LEDGER_BYTES, validateLedger } from '../ledger/ledger.js';
import { runSourceInside } from '../reconcile/receipt.js';
import { scoreSourcesAhead } from '../reconcile/scoreAhead.js';
import { finishRunOffLoop } from './ops.js';
import { assertSourceInside, isSealed, readRun, runDir, RUN_SCHEMA, type RunDoc } from './store.js';

export interface StoredRun {
  /** The session's run id (bridge.ts runIdFor of the orchestrator's run id). */
  rid: string;
  /** The run's kind, as its run.json's command (plan, execute, conflict). */
  command: string;
  goal: string;
  /** The ledger's text as stored. */
  ledger: string;
  /** How a refusal names where the ledger came from (the run, and that it is the database's copy). */
  label: string;
}

/**
 * 'here': the run's folder was already in the session (ran here, or imported before); nothing was written.
 * `ensureSession` makes the session (and whatever goes with it) once the ledger is known to be good (awaited).
 */
export async function importStoredRun(lc: LifecycleContext, root: WorkflowRoot, sid: string, run: StoredRun, ensureSession: () => unknown): Promise<'imported' | 'here'> {
  if (await runHere(lc, root, sid, run.rid)) return 'here';
  const dir = runDir(root, sid, run.rid);
  const ledger = storedLedger(sid, run);
  await ensureSession();
  const now = new Date().toISOString();
  const doc: RunDoc = { schema_version: RUN_SCHEMA, run_id: run.rid, session_id: sid, step_id: 'step-1', parent_run_id: null, retry_of_run_id: null, attempt: 1, command: run.command, args: [], goal: run.goal, status: 'completed', revision: 1, actor_id: 'maestro', input_refs: [], output_refs: [], primary_artifact_id: null, verdict: null, summary: null, created_at: now, started_at: now, ended_at: now, sealed_at: null };
  const temp = join(root.workflowDir, 'sessions', sid, 'runs', `.import-${run.rid}-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(temp, { recursive: true });
  try {
    writeFileSync(join(temp, 'run.json'), `${JSON.stringify(doc, null, 2)}\n`);
    writeFileSync(join(temp, 'knowledge-delta.json'), `${JSON.stringify(ledger, null, 2)}\n`);
    renameSync(temp, dir);
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    // Another import put the run in place first: it stands.
    if (existsSync(join(dir, 'run.json'))) return 'here';
    throw err;
  }
  await sealImported(lc, root, sid, run.rid);
  return 'imported';
}

/**
 * Whether the run's folder is already in the session (this host ran it, or imported it before). Asked before its
 * stored ledger is read (up to 4 MB from the database; daemon/knowledgeImport.ts), so a gate looked at again reads
 * none: one stat per run. An import stopped between its rename and its seal is sealed now.
 */
export async function runHere(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): Promise<boolean> {
  assertSourceInside(root, sid, rid, 'write');
  if (!lstatSync(runDir(root, sid, rid), { throwIfNoEntry: false })) return false;
  await sealIfImported(lc, root, sid, rid);
  return true;
}

/** Scores the imported run's candidates ahead, in slices, then seals it unless an import at the same time did. */
async function sealImported(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): Promise<void> {
  await scoreSourcesAhead(lc, root, [runSourceInside(root, sid, rid)]);
  // Off the loop, its locks awaited (a GET of a review or a task's page imports): null, nothing to finish, when sealed
  // already, or by another process while it waited.
  await finishRunOffLoop(lc, root, sid, rid);
}

/**
 * A plain run folder (not a link to this host's run directory, as the orchestrator's are) left unsealed: an import
 * stopped between its rename and its seal. Sealed now; a run folder of this host is left as it is.
 */
async function sealIfImported(lc: LifecycleContext, root: WorkflowRoot, sid: string, rid: string): Promise<void> {
  const dir = runDir(root, sid, rid);
  if (lstatSync(dir).isSymbolicLink() || !existsSync(join(dir, 'run.json'))) return;
  const doc = readRun(root, sid, rid);
  if (!isSealed(doc) && doc.status === 'completed' && doc.actor_id === 'maestro') await sealImported(lc, root, sid, rid);
}

/** The stored ledger, read as its file would be: the same size cap and schema, and it must be this run's. */
function storedLedger(sid: string, run: StoredRun) {
  const bytes = Buffer.byteLength(run.ledger);
  if (bytes > MAX_LEDGER_BYTES) throw new MaestroError('CORRUPT_FILE', `${run.label}: ${bytes} bytes, more than a ledger may be (${MAX_LEDGER_BYTES}); it was not imported.`);
  let raw: unknown;
  try {
    raw = JSON.parse(run.ledger);
  } catch {
    throw new MaestroError('CORRUPT_FILE', `${run.label}: not valid JSON (${jsonSyntaxWhere(run.ledger)}); it was not imported.`);
  }
  const ledger = validateLedger(run.label, raw);
  if (ledger.session_id !== sid || ledger.run_id !== run.rid) throw new MaestroError('CORRUPT_FILE', `${run.label}: it is the ledger of session ${ledger.session_id} run ${ledger.run_id ?? '(none)'}, not of session ${sid} run ${run.rid}; it was not imported.`);
  return ledger;
}
