/**
 * What a person, an agent or a load writes into a ledger (a run's or the session's): stage, record, and the
 * consumed record of an explicit `maestro load`. Each checks, before it writes, that the run is not sealed and the
 * session is open, and again under the ledger's lock (`assertStillWritable`): a run's end or a session's seal
 * holds that lock until it has sealed (ops.ts runEndLocks, sealSession).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isMaestroError, MaestroError } from '../../../core/errors.js';
import { openKnowledge } from '../../knowledge.js';
import { readCorpus } from '../ledger/corpusDocs.js';
import { candidateId } from '../ledger/recipes.js';
import { emptyLedger, readLedger, recordInto, stageInto, updateLedger, type Action, type InputSource, type Ledger, type LedgerCandidate, type Signal, type SourceKind } from '../ledger/ledger.js';
import type { WorkflowRoot } from '../../format/root.js';
import { runSource, sessionSource, type Source } from '../reconcile/receipt.js';
import { activeRun, assertSessionInside, assertSourceInside, assertWritableRun, isSealed, listRunIds, readRunFile, readSession, runFolderOutside, type RunDoc, type SessionDoc } from './store.js';

const nowIso = () => new Date().toISOString();

/**
 * Resolves knowledge ids: the reconciliation corpus first, then every alias Knowledge I knows. Unknown ids
 * are refused. Read without a cache: only one-shot callers (a CLI command, an MCP tool call) stage or record.
 */
export function resolveKnowledgeIds(root: WorkflowRoot, ids: string[], env: NodeJS.ProcessEnv): string[] {
  const docs = readCorpus(root.workflowDir).docs;
  const byAlias = new Map<string, string>();
  for (const d of docs) for (const a of [d.id, ...d.aliases]) byAlias.set(a, d.id);
  let k: ReturnType<typeof openKnowledge> | null = null;
  try {
    const unknown: string[] = [];
    const out = ids.map((id) => {
      const hit = byAlias.get(id);
      if (hit) return hit;
      k ??= openKnowledge(root.confined ? { workflowRoot: root.workflowDir, env } : { cwd: root.projectDir, env });
      const r = k.resolveId(id);
      if (!r) unknown.push(id);
      return r ?? id;
    });
    if (unknown.length) throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `Unknown knowledge id${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (not in ${root.workflowDir}; find ids with maestro search or maestro load --list).`);
    return out;
  } finally {
    (k as ReturnType<typeof openKnowledge> | null)?.close();
  }
}

/** Where a stage/record writes: the given run, the session ledger, or the active run. */
export function ledgerSourceFor(root: WorkflowRoot, opts: { run?: string; session?: string }, env: NodeJS.ProcessEnv): Source {
  const src = ledgerSourceOf(root, opts, env);
  assertSessionInside(root, src.sid);
  return src;
}

function ledgerSourceOf(root: WorkflowRoot, opts: { run?: string; session?: string }, env: NodeJS.ProcessEnv): Source {
  if (opts.run) return writableRunSource(root, opts.session ?? findSessionOfRun(root, opts.run, env), opts.run);
  if (opts.session) {
    assertSessionOpen(readSession(root, opts.session));
    return sessionSource(root, opts.session);
  }
  const a = activeRun(root, env);
  if (!a) throw new MaestroError('BAD_INPUT', 'No run given and no active run: pass --run <id> --session <id>, or --session <id> for the session ledger.');
  return writableRunSource(root, a.sid, a.rid);
}

/**
 * A run's ledger to stage or record into: its folder, when a link, must lead into `.workflow/`, the orchestrator's
 * run folder or this process's own run folder (store.ts `runFolderOutside`), checked before its run.json is read
 * through it; then the run must not be sealed.
 */
function writableRunSource(root: WorkflowRoot, sid: string, rid: string): Source {
  assertSourceInside(root, sid, rid, 'write');
  assertWritableRun(root, sid, rid);
  return runSource(root, sid, rid);
}

function assertSessionOpen(s: SessionDoc): void {
  if (s.status !== 'open') throw new MaestroError('ILLEGAL_TRANSITION', `Session ${s.session_id} is ${s.status}; its ledger takes no new records.`);
}

function findSessionOfRun(root: WorkflowRoot, rid: string, env: NodeJS.ProcessEnv): string {
  const a = activeRun(root, env);
  if (a && a.rid === rid) return a.sid;
  throw new MaestroError('BAD_INPUT', `--run ${rid} needs --session <id> (the run is not the active run).`);
}

/** A new ledger for the source, when it has none yet (updateLedger's `init`). */
export function initLedger(src: Source) {
  return () => emptyLedger(src.sid, src.rid === 'session' ? null : src.rid, nowIso());
}

export interface StageOptions {
  target: 'spec' | 'knowhow';
  title: string;
  content: string;
  action?: Action;
  category?: string | null;
  evidence?: string[];
  signal?: Signal;
  signalIds?: string[];
  run?: string;
  session?: string;
}

export function stage(root: WorkflowRoot, o: StageOptions, env: NodeJS.ProcessEnv): { candidate: LedgerCandidate; ledger: string; recorded: string[] } {
  if (o.target !== 'spec' && o.target !== 'knowhow') throw new MaestroError('BAD_INPUT', `stage target must be spec|knowhow (got ${o.target}).`);
  const action = o.action ?? 'propose';
  if (!['propose', 'reaffirm', 'supersede', 'contest'].includes(action)) throw new MaestroError('BAD_INPUT', `--action must be propose|reaffirm|supersede|contest (got ${action}).`);
  if (o.signal && !['consumed', 'cited', 'validated', 'contradicted'].includes(o.signal)) throw new MaestroError('BAD_INPUT', `--signal must be consumed|cited|validated|contradicted (got ${o.signal}).`);
  const src = ledgerSourceFor(root, o, env);
  // Validate everything before the first write: unknown ids change nothing.
  const ids = o.signal && o.signalIds?.length ? resolveKnowledgeIds(root, o.signalIds, env) : [];
  const origin = src.rid === 'session' ? `session:${src.sid}` : `run:${src.rid}`;
  const evidence = [origin, ...(o.evidence ?? [])];
  refuseConflictingRestage(root, src, candidateId(o.target, o.content.trim()), action);
  return updateLedger(src.ledgerPath, initLedger(src), (l) => {
    assertStillWritable(root, src);
    const now = nowIso();
    const candidate = stageInto(l, { target: o.target, action, title: o.title, content: o.content, category: o.category ?? null, source_kind: 'manual' as SourceKind, evidence_refs: evidence }, now, src.ledgerPath);
    for (const id of ids) recordInto(l, id, o.signal!, 'manual', o.evidence ?? [], now);
    return { candidate: { ...candidate }, ledger: src.ledgerPath, recorded: ids };
  });
}

/**
 * Seed 000 §3.2: one candidate (one content) cannot be proposed in one run of a session and contested
 * or superseded in another. The same ledger already refuses it (stageInto); this checks the session's
 * other ledgers. Unreadable ledgers are skipped here, and run folders that link out of bounds are not read
 * (runFolderOutside): review reports both. An agent's CLI does not know the daemon's home (its MAESTRO_HOME
 * is withheld), so the other runs of a daemon with another home are skipped rather than failing its stage.
 */
function refuseConflictingRestage(root: WorkflowRoot, src: Source, id: string, action: Action): void {
  const others = [sessionSource(root, src.sid), ...listRunIds(root, src.sid).filter((rid) => !runFolderOutside(root, src.sid, rid)).map((rid) => runSource(root, src.sid, rid))];
  for (const other of others) {
    if (other.rid === src.rid) continue;
    let ledger;
    try {
      ledger = readLedger(other.ledgerPath);
    } catch {
      continue;
    }
    const c = ledger?.candidates.find((x) => x.candidate_id === id);
    if (c && c.action !== action)
      throw new MaestroError('KNOWLEDGE_CONFLICT', `Candidate ${id} is staged with action ${c.action} in ${other.rid === 'session' ? `the ledger of session ${src.sid}` : `run ${other.rid}`} (${other.ledgerPath}); identical content cannot be restaged as ${action} in another run of the same session.`);
  }
}

export function record(root: WorkflowRoot, ids: string[], o: { signal?: Signal; source?: InputSource; evidence?: string[]; run?: string; session?: string }, env: NodeJS.ProcessEnv): { ledger: string; recorded: string[] } {
  if (!ids.length) throw new MaestroError('BAD_INPUT', 'record needs at least one knowledge id.');
  const signal = o.signal ?? 'cited';
  const source = o.source ?? 'manual';
  if (!['consumed', 'cited', 'validated', 'contradicted'].includes(signal)) throw new MaestroError('BAD_INPUT', `--signal must be consumed|cited|validated|contradicted (got ${signal}).`);
  if (!['load', 'search', 'injection', 'manual'].includes(source)) throw new MaestroError('BAD_INPUT', `--source must be load|search|injection|manual (got ${source}).`);
  const src = ledgerSourceFor(root, o, env);
  const resolved = resolveKnowledgeIds(root, ids, env);
  updateLedger(src.ledgerPath, initLedger(src), (l) => {
    assertStillWritable(root, src);
    const now = nowIso();
    for (const id of resolved) recordInto(l, id, signal, source, o.evidence ?? [], now);
  });
  return { ledger: src.ledgerPath, recorded: resolved };
}

/** What an explicit load recorded; `warning` says why a load in a run was not recorded, naming the file. */
export interface ConsumedRecord {
  recorded: boolean;
  warning: string | null;
}

/**
 * `maestro load` in an active run: records `consumed` (source load). Search and injection never call this.
 * No active run, or a sealed one: nothing is written. A run.json or ledger that does not read: nothing is
 * written either, and the warning names the file; the load itself answers all the same (the record is the
 * run's bookkeeping, and an agent that cannot read knowledge over it could not fix the file anyway).
 */
export function recordConsumed(root: WorkflowRoot, ids: string[], env: NodeJS.ProcessEnv): ConsumedRecord {
  if (!ids.length) return { recorded: false, warning: null };
  try {
    const target = consumingRun(root, env);
    if (!target) return { recorded: false, warning: null };
    const run = readRunFile(target.runFile);
    if (isSealed(run)) return { recorded: false, warning: null };
    // Read again under the ledger's lock: a run's end holds it until the run is sealed (runEndLocks).
    const recorded = updateLedger(target.ledgerPath, () => target.init(run), (l) => {
      if (isSealed(readRunFile(target.runFile))) return false;
      const now = nowIso();
      for (const id of ids) recordInto(l, id, 'consumed', 'load', [], now);
      return true;
    });
    return { recorded, warning: null };
  } catch (err) {
    if (!isMaestroError(err)) throw err;
    return { recorded: false, warning: `The load is not recorded as consumed in the run: ${err.message}` };
  }
}

/** The run an explicit load is recorded in: `$MAESTRO_RUN_DIR`'s, else the active run's; null when neither has a run.json. */
function consumingRun(root: WorkflowRoot, env: NodeJS.ProcessEnv): { runFile: string; ledgerPath: string; init: (run: RunDoc) => Ledger } | null {
  // An agent spawned by the orchestrator works in a worktree; its run directory comes from the worker's environment.
  const dir = env.MAESTRO_RUN_DIR;
  if (dir && existsSync(join(dir, 'run.json'))) return { runFile: join(dir, 'run.json'), ledgerPath: join(dir, 'knowledge-delta.json'), init: (run) => emptyLedger(run.session_id, run.run_id, nowIso()) };
  const a = activeRun(root, env);
  if (!a) return null;
  assertSourceInside(root, a.sid, a.rid, 'write'); // a run folder linked out is written nothing: the warning names the link
  const src = runSource(root, a.sid, a.rid);
  const runFile = join(src.dir, 'run.json');
  // A run that is gone (.active-run left behind) is no active run.
  return existsSync(runFile) ? { runFile, ledgerPath: src.ledgerPath, init: initLedger(src) } : null;
}

/**
 * Under a ledger's lock, before its change: the run is still not sealed, the session still open. A stage or a record
 * checked it before the lock; a run's end or a session's seal, holding that lock until it has sealed (runEndLocks,
 * sealSession), may have sealed it since.
 */
function assertStillWritable(root: WorkflowRoot, src: Source): void {
  if (src.rid === 'session') assertSessionOpen(readSession(root, src.sid));
  else assertWritableRun(root, src.sid, src.rid);
}
