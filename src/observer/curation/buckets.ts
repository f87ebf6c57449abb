/**
 * IntentBucketLedger: groups explorations by intent inside the bundle's
 * `curation` block and decides when an intent closes (FORMATS §8.7).
 *
 * On each ready summary the exploration joins the OPEN bucket — except the
 * pivot turn: a pivot away from a non-greeting intent closes that bucket and
 * queues it for curation with its own last exploration as the anchor (the
 * only turn that shows the wiki badge), and the pivot turn opens the new
 * intent's bucket. (GUI-Anything files the pivot turn under the old intent, so
 * the new bucket could stay empty and never be curated.)
 * A bucket is curated once (curatedAt); later turns on the same key join it
 * but never re-trigger curation.
 */
import { overUnknownKeys } from '../bundle/store.js';
import type { FlowchartHint, IntentBucket, SessionBundle, SessionIntentState, TitleDelta, WriteRecord } from '../bundle/types.js';
import { normalizeIntentKey, resolveTitleDelta } from './intent.js';

const HISTORY_CAP = 8;

export interface RecordResult {
  delta: TitleDelta;
  /** A closed intent to curate now, with the anchor exploration; null when nothing closed. */
  curate: { intentKey: string; anchorExplorationId: string } | null;
}

function isGreetingIntent(intent: SessionIntentState): boolean {
  return intent.intentKey === 'greeting' || intent.phase === 'idle';
}

function ensureBucket(bundle: SessionBundle, intentKey: string, nodeTitle: string): IntentBucket {
  const existing = bundle.curation.buckets[intentKey];
  if (existing) {
    if (nodeTitle.trim()) existing.nodeTitle = nodeTitle;
    return existing;
  }
  const bucket: IntentBucket = { intentKey, nodeTitle, explorationIds: [] };
  bundle.curation.buckets[intentKey] = bucket;
  return bucket;
}

/** Records one ready summary's hint in the ledger and the session intent; mutates the bundle. */
export function recordSummary(bundle: SessionBundle, explorationId: string, hint: FlowchartHint, now: number): RecordResult {
  const prior = bundle.session.intent;
  const hintKey = normalizeIntentKey(hint.intentKey);
  const delta = resolveTitleDelta(prior ? { intentKey: prior.intentKey, nodeTitle: prior.nodeTitle } : null, { ...hint, intentKey: hintKey });
  if (!bundle.curation.openIntentKey) bundle.curation.openIntentKey = prior?.intentKey || hintKey;
  const openKey = bundle.curation.openIntentKey;

  let curate: RecordResult['curate'] = null;
  let target = openKey;
  if (delta === 'pivot' && openKey !== hintKey) {
    const closing = bundle.curation.buckets[openKey];
    const anchor = closing?.explorationIds[closing.explorationIds.length - 1];
    if (prior && !isGreetingIntent(prior) && closing && !closing.curatedAt && anchor) curate = { intentKey: openKey, anchorExplorationId: anchor };
    bundle.curation.openIntentKey = hintKey;
    target = hintKey;
  }
  const open = ensureBucket(bundle, target, target === hintKey ? hint.nodeTitle : '');
  if (!open.explorationIds.includes(explorationId)) open.explorationIds.push(explorationId);

  const phase: SessionIntentState['phase'] = delta === 'idle' ? 'idle' : delta === 'blocked' ? 'blocked' : delta === 'done' ? 'done' : hintKey === 'greeting' ? 'idle' : 'active';
  const history = [...(prior?.history ?? []), { explorationId, at: now, intentKey: hintKey, nodeTitle: hint.nodeTitle, titleDelta: delta, ...(hint.titleDeltaNote ? { titleDeltaNote: hint.titleDeltaNote } : {}) }].slice(-HISTORY_CAP);
  // Rebuilt over the intent as read: keys another writer (a newer GUI-Anything) put on it are written back.
  bundle.session.intent = overUnknownKeys<SessionIntentState>((prior ?? {}) as unknown as Record<string, unknown>, {
    sessionId: bundle.meta.sessionId,
    revision: (prior?.revision ?? 0) + 1,
    intentKey: hintKey,
    nodeTitle: hint.nodeTitle,
    parentIntentKey: delta === 'pivot' ? (prior?.intentKey ?? null) : (prior?.parentIntentKey ?? null),
    phase,
    history,
    updatedAt: now,
  });
  return { delta, curate };
}

/** The open bucket when it is non-empty and not yet curated (what the idle sweep curates). */
export function openUncuratedBucket(bundle: SessionBundle): IntentBucket | null {
  const key = bundle.curation.openIntentKey;
  const bucket = key ? bundle.curation.buckets[key] : undefined;
  if (!bucket || bucket.curatedAt || !bucket.explorationIds.length) return null;
  return bucket;
}

type PersistResult = NonNullable<IntentBucket['persistResult']>;
// Every key this code knows on each (the compiler checks the lists against the types).
const PERSIST_RESULT_KEYS = { status: true, reason: true, id: true, path: true } satisfies Record<keyof PersistResult, true>;
const WRITE_KEYS = { origin: true, status: true, reason: true, targetId: true, targetPath: true, turnCount: true, persistMeta: true, completedAt: true, proposalId: true } satisfies Record<keyof WriteRecord, true>;

/**
 * `value` over the keys of `read` this code does not know: what another writer (a newer GUI-Anything) put
 * there is written back, while a known key `value` leaves out (an old outcome's reason) does not stay.
 */
function overForeignKeys<T extends object>(read: unknown, known: Record<keyof T, true>, value: T): T {
  const foreign = read && typeof read === 'object' && !Array.isArray(read) ? Object.entries(read).filter(([k]) => !Object.hasOwn(known, k)) : [];
  return overUnknownKeys<T>(Object.fromEntries(foreign), value);
}

export function markCurated(bundle: SessionBundle, intentKey: string, anchorExplorationId: string, write: WriteRecord, now: number): void {
  const bucket = bundle.curation.buckets[intentKey];
  if (bucket) {
    bucket.curatedAt = now;
    bucket.anchorExplorationId = anchorExplorationId;
    bucket.persistResult = overForeignKeys<PersistResult>(bucket.persistResult, PERSIST_RESULT_KEYS, {
      status: write.status,
      ...(write.reason ? { reason: write.reason } : {}),
      id: `${bundle.meta.sessionId}:${anchorExplorationId}`,
      ...(write.targetPath ? { path: write.targetPath } : {}),
    });
  }
  // The badge goes on the anchor turn only.
  const anchor = bundle.explorations[anchorExplorationId];
  if (anchor) anchor.write = overForeignKeys<WriteRecord>(anchor.write, WRITE_KEYS, write);
}

/** The 30 s idle sweep (FORMATS §8.7): +100 ms so a timer set at the last completion lands past the bound. */
export const IDLE_SWEEP_MS = 30_000;
export const IDLE_TIMER_MS = IDLE_SWEEP_MS + 100;

/** Whether the idle sweep should curate now: nothing running, no summary pending, ≥30 s since the last completion. */
export function idleSweepDue(input: { anyRunning: boolean; pendingSummaries: number; lastCompletedAt: number | null; now: number }): boolean {
  if (input.anyRunning || input.pendingSummaries > 0 || input.lastCompletedAt === null) return false;
  return input.now - input.lastCompletedAt >= IDLE_SWEEP_MS;
}
