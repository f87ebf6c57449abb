/**
 * What gets curated (FORMATS §8.7): the low-value test, the intent digest of a
 * bucket's turns (built from the bundle alone: summaries + evidence), and the
 * skip gates that run before any curator decision.
 */
import type { EvidenceEntry, IntentBucket, SessionBundle, SummaryItem, WikiPersistMeta } from '../bundle/types.js';

const LOW_VALUE = ['hello', 'hi', 'hey', '你好', '您好', '在吗', 'test', 'ping'];
const EXTRACTOR_LOW_VALUE = [...LOW_VALUE, 'thanks', 'thank you'];

export interface WorkSignals {
  commands: readonly string[];
  files: readonly string[];
  nodeTypes: readonly string[];
}

/**
 * Intent-mode isLowValue: any command, file or tool node, or a request longer
 * than 24 chars, is work. Otherwise low value iff the request equals, or the
 * summary contains (plain substring: "hi" inside "this" counts), a greeting.
 */
export function isLowValue(request: string, summary: string, work: WorkSignals): boolean {
  const req = request.trim().toLowerCase();
  if (work.commands.length || work.files.length || work.nodeTypes.includes('tool') || req.length > 24) return false;
  const sum = summary.toLowerCase();
  return LOW_VALUE.some((w) => req === w || sum.includes(w));
}

/** The auto-extractor's stricter variant used by the legacy per-turn mode. */
export function isLowValueForExtractor(request: string, summary: string, work: WorkSignals, result: EvidenceEntry['result']): boolean {
  if (result === 'abandoned' || summary.trim().length < 10) return true;
  const req = request.trim().toLowerCase();
  if (work.commands.length || work.files.length || work.nodeTypes.some((t) => t === 'tool' || t === 'result') || req.length > 24) return false;
  const sum = summary.toLowerCase();
  return EXTRACTOR_LOW_VALUE.some((w) => {
    const ascii = /^[a-z ]+$/.test(w);
    if (!ascii) return req === w || sum.includes(w);
    const re = new RegExp(`\\b${w}\\b`);
    return req === w || re.test(sum);
  });
}

export interface DigestTurn {
  explorationId: string;
  request: string;
  summary: string;
  persistMeta: WikiPersistMeta | null;
  commands: string[];
  files: string[];
  toolCount: number;
  result: EvidenceEntry['result'];
}

export interface IntentDigest {
  sessionId: string;
  intentKey: string;
  nodeTitle: string;
  anchorExplorationId: string;
  turns: DigestTurn[];
  /** The first turn's question: what the intent set out to do. */
  request: string;
  files: string[];
  commands: string[];
}

function usableSummary(s: SummaryItem | undefined): s is SummaryItem {
  return Boolean(s && s.status === 'ready' && s.text.trim() && !(s.reason ?? '').startsWith('excerpt'));
}

/** Accepts the snake_case evidence the writers store and the declared camelCase type. */
function evidenceOf(bundle: SessionBundle, id: string): Partial<EvidenceEntry> {
  return (bundle.curation.evidence[id] ?? {}) as Partial<EvidenceEntry>;
}

export function buildIntentDigest(bundle: SessionBundle, bucket: IntentBucket, anchorExplorationId: string): IntentDigest {
  const turns: DigestTurn[] = [];
  for (const id of bucket.explorationIds) {
    const e = bundle.explorations[id];
    if (!e || !usableSummary(e.summary)) continue;
    const ev = evidenceOf(bundle, id);
    turns.push({
      explorationId: id,
      request: e.question,
      summary: e.summary.text,
      persistMeta: e.summary.persistMeta ?? null,
      commands: ev.commands ?? [],
      files: ev.files ?? e.meta?.files ?? [],
      toolCount: e.meta?.toolCount ?? (ev.nodes ?? []).filter((n) => n.type === 'tool').length,
      result: ev.result ?? (e.meta?.status === 'interrupted' ? 'abandoned' : 'success'),
    });
  }
  const files = [...new Set(turns.flatMap((t) => t.files))];
  const commands = [...new Set(turns.flatMap((t) => t.commands))];
  return {
    sessionId: bundle.meta.sessionId,
    intentKey: bucket.intentKey,
    nodeTitle: bucket.nodeTitle,
    anchorExplorationId,
    turns,
    request: turns[0]?.request ?? bucket.nodeTitle,
    files,
    commands,
  };
}

export type IntentSkipReason = 'missing_bucket' | 'already_curated' | 'intent_not_wiki_eligible' | 'empty_digest' | 'low_value' | 'no_increment';

export function shouldSkipIntentCurate(digest: IntentDigest): IntentSkipReason | null {
  if (!digest.turns.length) return 'empty_digest';
  if (digest.turns.every((t) => isLowValue(t.request, t.summary, { commands: t.commands, files: t.files, nodeTypes: t.toolCount ? ['tool'] : [] }))) return 'low_value';
  if (!digest.turns.some((t) => t.persistMeta?.solution_detail) && !digest.turns.some((t) => t.toolCount > 0)) return 'no_increment';
  return null;
}
