/**
 * The promotion receipt (`knowledge-promotion.json` in the run or session
 * folder): the `promoting` intent with its planned id reaches the disk before
 * any knowledge file is written, and the outcome after. A rerun reads only
 * this file — never process memory — to replay safely (seed 000 §5.2).
 *
 * Why a file next to the ledger rather than the ledger itself: a promoted
 * run must be sealed, and a sealed run's ledger is immutable. The session
 * ledger (writable) also gets the FORMATS §4.1 statuses.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { writeFileAtomic } from '../../format/atomic.js';
import { assertNotLinked } from '../../format/linkGuard.js';
import { withCorpusLock } from '../../format/lock.js';
import type { WorkflowRoot } from '../../format/root.js';
import { isJsonObject, quoteJson, readJsonObject } from '../jsonFile.js';
import { assertSourceInside } from '../session/store.js';

export const PROMOTION_SCHEMA = 'knowledge-promotion-receipt/1.0';

export interface PromotionEntry {
  state: 'promoting' | 'promoted';
  target: 'spec' | 'knowhow';
  planned_id: string;
  promoted_id: string | null;
  content_hash: string;
  outcome: 'created' | 'reaffirmed' | null;
  supersedes: string | null;
  planned_at: string;
  promoted_at: string | null;
}

export interface PromotionFile {
  schema_version: typeof PROMOTION_SCHEMA;
  session_id: string;
  run_id: string;
  entries: Record<string, PromotionEntry>;
}

export const promotionPath = (dir: string) => join(dir, 'knowledge-promotion.json');

export function readPromotions(dir: string): PromotionFile | null {
  const p = promotionPath(dir);
  if (!existsSync(p)) return null;
  const raw = readJsonObject(p);
  if (raw.schema_version !== PROMOTION_SCHEMA) throw new MaestroError('CORRUPT_FILE', `${p}: field schema_version must be ${PROMOTION_SCHEMA}.`, { details: { file: p } });
  if (!isJsonObject(raw.entries)) {
    const found = raw.entries === undefined ? '; it is missing' : `, found ${quoteJson(raw.entries)}`;
    throw new MaestroError('CORRUPT_FILE', `${p}: field entries must be an object${found}.`, { details: { file: p } });
  }
  return raw as unknown as PromotionFile;
}

/** `dir` is the source's folder (session `sid`, run `rid` or "session"): refused when a link sends it out of `root` (store.ts). */
export function updatePromotions<T>(root: WorkflowRoot, dir: string, sid: string, rid: string, fn: (f: PromotionFile) => T): T {
  const p = promotionPath(dir);
  assertSourceInside(root, sid, rid);
  assertNotLinked(p);
  return withCorpusLock([p], () => {
    const f = readPromotions(dir) ?? { schema_version: PROMOTION_SCHEMA, session_id: sid, run_id: rid, entries: {} };
    const out = fn(f);
    writeFileAtomic(p, `${JSON.stringify(f, null, 2)}\n`);
    return out;
  });
}

/**
 * Candidate ids already promoted from this folder. A corrupt promotion receipt throws (CORRUPT_FILE):
 * reading it as empty would show every promoted candidate as pending again, ready to promote twice.
 */
export function promotedIds(dir: string): Set<string> {
  const f = readPromotions(dir);
  return new Set(Object.entries(f?.entries ?? {}).filter(([, e]) => e.state === 'promoted').map(([k]) => k));
}
