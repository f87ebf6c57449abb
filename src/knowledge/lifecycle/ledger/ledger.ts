/**
 * `knowledge-delta.json` (FORMATS §4.1): the run ledger (`run-knowledge-delta/1.0`)
 * and the session ledger (`session-knowledge-delta/1.0`). Strict: unknown keys,
 * wrong versions, bad enums and candidate ids that do not match their content
 * are refused with the file and the field. Every write is a read-modify-write
 * under the corpus lock and lands atomically, so two processes never lose each
 * other's records.
 */
import { existsSync, statSync } from 'node:fs';
import { MaestroError } from '../../../core/errors.js';
import { LONE_SURROGATE } from '../../../core/schemas.js';
import { settleWrite, writtenNow, type FileWrite } from '../../format/atomic.js';
import { assertNotLinked } from '../../format/linkGuard.js';
import { withCorpusLock } from '../../format/lock.js';
import { isJsonObject, parseJsonFile, quoteJson } from '../jsonFile.js';
import { candidateId } from './recipes.js';

export const RUN_LEDGER = 'run-knowledge-delta/1.0';
export const SESSION_LEDGER = 'session-knowledge-delta/1.0';
const LEDGER_VERSIONS = [RUN_LEDGER, SESSION_LEDGER, 'run-knowledge-delta/1.1', 'session-knowledge-delta/1.1'];

export type Signal = 'consumed' | 'cited' | 'validated' | 'contradicted';
export type InputSource = 'load' | 'search' | 'injection' | 'manual';
export type Action = 'propose' | 'reaffirm' | 'supersede' | 'contest';
export type SourceKind = 'decision' | 'constraint' | 'manual';
export type CandidateStatus = 'pending' | 'promoting' | 'promoted' | 'rejected';

export const SIGNALS: readonly Signal[] = ['consumed', 'cited', 'validated', 'contradicted'];
export const SOURCES: readonly InputSource[] = ['load', 'search', 'injection', 'manual'];
export const ACTIONS: readonly Action[] = ['propose', 'reaffirm', 'supersede', 'contest'];

export interface LedgerInput {
  knowledge_id: string;
  signal: Signal;
  source: InputSource;
  count: number;
  first_recorded_at: string;
  last_recorded_at: string;
  evidence?: string[];
}

export interface PromotionReceipt {
  outcome: 'created' | 'reaffirmed';
  promoted_at: string;
  content_hash: string;
}

/** A staged candidate as the ledger stores it: what was staged, and what the ledger tracks about it. */
export interface LedgerCandidate extends StageInput {
  candidate_id: string;
  occurrences: number;
  first_recorded_at: string;
  last_recorded_at: string;
  status: CandidateStatus;
  promoted_id: string | null;
  promotion_receipt: PromotionReceipt | null;
  source_snapshot?: unknown;
}

export interface Ledger {
  schema_version: string;
  session_id: string;
  run_id?: string;
  revision: number;
  created_at: string;
  updated_at: string;
  inputs: LedgerInput[];
  candidates: LedgerCandidate[];
  source_repository?: unknown;
}

/**
 * A ledger is read whole, then every candidate is scored against every corpus document (reconcile/matcher.ts),
 * in the daemon too (a review, POST …/reconcile). Measured on this machine: 2 ms a candidate against
 * 1,000 documents, and about 1.2 µs a byte of a candidate's content, so a ledger committed with 100,000
 * candidates held the daemon for minutes. These caps bound a reconcile to a few seconds at worst (the daemon does
 * that scoring in slices that give its event loop a turn: reconcile/scored.ts); far beyond
 * what the tools stage (an agent's call adds at most 100 candidates of 8,000 characters, executor/agentRunFolder.ts).
 */
export const MAX_LEDGER_BYTES = 4 * 1024 * 1024;
export const MAX_LEDGER_CANDIDATES = 1000;

const TOP_KEYS = new Set(['schema_version', 'session_id', 'run_id', 'revision', 'created_at', 'updated_at', 'inputs', 'candidates', 'source_repository']);
const INPUT_KEYS = new Set(['knowledge_id', 'signal', 'source', 'count', 'first_recorded_at', 'last_recorded_at', 'evidence']);
const CAND_KEYS = new Set(['candidate_id', 'target', 'action', 'title', 'content', 'category', 'source_kind', 'evidence_refs', 'occurrences', 'first_recorded_at', 'last_recorded_at', 'status', 'promoted_id', 'promotion_receipt', 'source_snapshot']);

function bad(file: string, field: string, msg: string): never {
  throw new MaestroError('CORRUPT_FILE', `${file}: field ${field} ${msg}.`, { details: { file } });
}

function str(file: string, field: string, v: unknown): string {
  if (typeof v !== 'string') bad(file, field, 'must be a string');
  return v;
}

function oneOf<T extends string>(file: string, field: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !allowed.includes(v as T)) bad(file, field, `must be one of ${allowed.join('|')} (got ${JSON.stringify(v)})`);
  return v as T;
}

/** `where` is the field's path, '' for the whole file (which then "must hold a JSON object", as other readers say). */
function strict(file: string, where: string, o: unknown, keys: Set<string>): Record<string, unknown> {
  if (!isJsonObject(o)) {
    const found = o === undefined ? '; it is missing' : `, found ${quoteJson(o)}`;
    if (!where) throw new MaestroError('CORRUPT_FILE', `${file}: must hold a JSON object${found}.`, { details: { file } });
    bad(file, where, `must be an object${found}`);
  }
  for (const k of Object.keys(o as object)) if (!keys.has(k)) bad(file, `${where ? `${where}.` : ''}${k}`, 'is not part of the schema');
  return o as Record<string, unknown>;
}

/** Validates a parsed ledger; throws naming the file and the field. */
export function validateLedger(file: string, raw: unknown): Ledger {
  // The version first: a newer writer's fields were refused one by one as "not part of the schema".
  if (isJsonObject(raw)) oneOf(file, 'schema_version', raw.schema_version, LEDGER_VERSIONS);
  const o = strict(file, '', raw, TOP_KEYS);
  str(file, 'session_id', o.session_id);
  if (String(o.schema_version).startsWith('run-')) str(file, 'run_id', o.run_id);
  if (!Number.isInteger(o.revision) || (o.revision as number) < 0) bad(file, 'revision', 'must be an integer ≥ 0');
  str(file, 'created_at', o.created_at);
  str(file, 'updated_at', o.updated_at);
  if (!Array.isArray(o.inputs)) bad(file, 'inputs', 'must be an array');
  if (!Array.isArray(o.candidates)) bad(file, 'candidates', 'must be an array');
  if (o.candidates.length > MAX_LEDGER_CANDIDATES) bad(file, 'candidates', `holds ${o.candidates.length} candidates, more than a ledger may (${MAX_LEDGER_CANDIDATES}), each scored against every knowledge document: it was not read. Remove candidates, or move some to another session's ledger`);
  (o.inputs as unknown[]).forEach((x, i) => {
    const f = `inputs[${i}]`;
    const r = strict(file, f, x, INPUT_KEYS);
    str(file, `${f}.knowledge_id`, r.knowledge_id);
    oneOf(file, `${f}.signal`, r.signal, SIGNALS);
    oneOf(file, `${f}.source`, r.source, SOURCES);
    if (!Number.isInteger(r.count) || (r.count as number) < 1) bad(file, `${f}.count`, 'must be an integer ≥ 1');
  });
  (o.candidates as unknown[]).forEach((x, i) => {
    const f = `candidates[${i}]`;
    const c = strict(file, f, x, CAND_KEYS);
    const id = str(file, `${f}.candidate_id`, c.candidate_id);
    if (!/^KDC-[a-f0-9]{16}$/.test(id)) bad(file, `${f}.candidate_id`, 'must match ^KDC-[a-f0-9]{16}$');
    const target = oneOf(file, `${f}.target`, c.target, ['spec', 'knowhow'] as const);
    oneOf(file, `${f}.action`, c.action, ACTIONS);
    str(file, `${f}.title`, c.title);
    const content = str(file, `${f}.content`, c.content);
    if (candidateId(target, content) !== id) bad(file, `${f}.candidate_id`, `does not match its content (expected ${candidateId(target, content)})`);
    if (c.category !== null && typeof c.category !== 'string') bad(file, `${f}.category`, 'must be a string or null');
    oneOf(file, `${f}.source_kind`, c.source_kind, ['decision', 'constraint', 'manual'] as const);
    if (!Array.isArray(c.evidence_refs) || c.evidence_refs.some((e) => typeof e !== 'string')) bad(file, `${f}.evidence_refs`, 'must be an array of strings');
    if (!Number.isInteger(c.occurrences) || (c.occurrences as number) < 1) bad(file, `${f}.occurrences`, 'must be an integer ≥ 1');
    oneOf(file, `${f}.status`, c.status, ['pending', 'promoting', 'promoted', 'rejected'] as const);
    if (c.promoted_id !== null && typeof c.promoted_id !== 'string') bad(file, `${f}.promoted_id`, 'must be a string or null');
    if (c.promotion_receipt !== null) {
      const r = strict(file, `${f}.promotion_receipt`, c.promotion_receipt, new Set(['outcome', 'promoted_at', 'content_hash']));
      oneOf(file, `${f}.promotion_receipt.outcome`, r.outcome, ['created', 'reaffirmed'] as const);
      if (typeof r.content_hash !== 'string' || !/^[a-f0-9]{64}$/.test(r.content_hash)) bad(file, `${f}.promotion_receipt.content_hash`, 'must be 64 hex');
    }
  });
  return o as unknown as Ledger;
}

/**
 * Reads a ledger: null when absent; throws (file + field) when corrupt. A write of it in flight in this process (a run's
 * end, its fsyncs off the event loop) is finished first, so nothing here reads the ledger it replaces.
 */
export function readLedger(file: string): Ledger | null {
  settleWrite(file);
  if (!existsSync(file)) return null;
  const size = statSync(file).size;
  if (size > MAX_LEDGER_BYTES) throw new MaestroError('CORRUPT_FILE', `${file}: ${size} bytes, more than a ledger may be (${MAX_LEDGER_BYTES}); it was not read.`, { details: { file } });
  return validateLedger(file, parseJsonFile(file));
}

export function emptyLedger(sessionId: string, runId: string | null, now: string): Ledger {
  return { schema_version: runId ? RUN_LEDGER : SESSION_LEDGER, session_id: sessionId, ...(runId ? { run_id: runId } : {}), revision: 0, created_at: now, updated_at: now, inputs: [], candidates: [] };
}

/**
 * Read-modify-write of one ledger under the lock. `mutate` returns false to
 * leave the file untouched (nothing changed).
 */
export function updateLedger<T>(file: string, init: () => Ledger, mutate: (l: Ledger) => T): T {
  assertNotLinked(file);
  return withCorpusLock([file], () => writtenNow(ledgerUpdate(file, init, mutate)));
}

/**
 * updateLedger's read and change, for a caller that holds the ledger's lock: yields the new text's write (none when
 * nothing changed) for the caller to do before it goes on, now or off the event loop (session/ops.ts completeAndSeal).
 */
export function* ledgerUpdate<T>(file: string, init: () => Ledger, mutate: (l: Ledger) => T): Generator<FileWrite, T, void> {
  assertNotLinked(file);
  const ledger = readLedger(file) ?? init();
  const before = JSON.stringify(ledger);
  const result = mutate(ledger);
  if (JSON.stringify(ledger) !== before) {
    ledger.revision += 1;
    ledger.updated_at = new Date().toISOString();
    const text = `${JSON.stringify(ledger, null, 2)}\n`;
    // Written only if it can be read again (readLedger's cap); the ledger on disk stays as it was.
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_LEDGER_BYTES) throw new MaestroError('BAD_INPUT', `${file} would grow to ${bytes} bytes, more than a ledger may be (${MAX_LEDGER_BYTES}). Nothing was written.`, { details: { file } });
    yield { file, text };
  }
  return result;
}

export interface StageInput {
  target: 'spec' | 'knowhow';
  action: Action;
  title: string;
  content: string;
  category: string | null;
  source_kind: SourceKind;
  evidence_refs: string[];
}

/**
 * Adds a candidate or, for identical content, counts one more occurrence.
 * Identical content restaged with a different action is refused: the id is
 * the content, so one candidate cannot both propose and contest.
 */
export function stageInto(ledger: Ledger, input: StageInput, now: string, file: string): LedgerCandidate {
  const content = input.content.trim();
  if (!content) throw new MaestroError('BAD_INPUT', 'A candidate needs non-empty content.');
  // Staged by an agent (MCP, its run's ledger), then written into a spec: a lone surrogate would land there as U+FFFD.
  // Control characters are kept as staged: the review shows them, visibly (test/knowledge2/reviewShowsText.test.ts).
  for (const [field, value] of [['title', input.title], ['content', content]] as const) {
    if (LONE_SURROGATE.test(value)) throw new MaestroError('BAD_INPUT', `The candidate's ${field} holds a lone UTF-16 surrogate, which is no character; send valid Unicode text. Nothing was staged.`, { details: { field } });
  }
  const title = input.title.trim() || content.slice(0, 120);
  const id = candidateId(input.target, content);
  const existing = ledger.candidates.find((c) => c.candidate_id === id);
  if (!existing && ledger.candidates.length >= MAX_LEDGER_CANDIDATES) throw new MaestroError('BAD_INPUT', `${file} already holds ${ledger.candidates.length} candidates, as many as a ledger may (${MAX_LEDGER_CANDIDATES}). Nothing was staged.`, { details: { file } });
  if (existing) {
    if (existing.action !== input.action) throw new MaestroError('KNOWLEDGE_CONFLICT', `${file}: candidate ${id} is already staged with action ${existing.action}; identical content cannot be restaged as ${input.action}.`);
    existing.occurrences += 1;
    existing.last_recorded_at = now;
    existing.evidence_refs = [...new Set([...existing.evidence_refs, ...input.evidence_refs])];
    return existing;
  }
  const c: LedgerCandidate = {
    candidate_id: id,
    target: input.target,
    action: input.action,
    title,
    content,
    category: input.category,
    source_kind: input.source_kind,
    evidence_refs: [...new Set(input.evidence_refs)],
    occurrences: 1,
    first_recorded_at: now,
    last_recorded_at: now,
    status: 'pending',
    promoted_id: null,
    promotion_receipt: null,
  };
  ledger.candidates.push(c);
  return c;
}

/** Merges an input by (knowledge_id, signal, source). */
export function recordInto(ledger: Ledger, knowledgeId: string, signal: Signal, source: InputSource, evidence: string[], now: string): void {
  const hit = ledger.inputs.find((i) => i.knowledge_id === knowledgeId && i.signal === signal && i.source === source);
  if (hit) {
    hit.count += 1;
    hit.last_recorded_at = now;
    if (evidence.length) hit.evidence = [...new Set([...(hit.evidence ?? []), ...evidence])];
    return;
  }
  ledger.inputs.push({ knowledge_id: knowledgeId, signal, source, count: 1, first_recorded_at: now, last_recorded_at: now, ...(evidence.length ? { evidence: [...new Set(evidence)] } : {}) });
}
