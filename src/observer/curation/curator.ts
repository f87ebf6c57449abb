/**
 * WikiCuratorService: files what an intent learned into the wiki.
 *
 * curateIntent (default mode), in order:
 *   missing_bucket / already_curated → nothing changes
 *   intent not eligible              → skipped intent_not_wiki_eligible
 *   shouldSkipIntentCurate           → skipped empty_digest | low_value | no_increment
 *   prior hit + decision             → the injected curator (an agent) when configured;
 *                                      else rules: prior → update it (a proposal, below); no prior → skipped
 *                                      skill_only_no_prior (intent mode never creates
 *                                      an entry without a prior by itself)
 *   curator throws                   → skipped skill_failed (skill_invalid for a
 *                                      malformed answer)
 *   decision fails checkDecision     → skipped skill_invalid (bad shape, or an
 *                                      update of an id it was not shown)
 *   create                           → deduplicateKnowledge first (may update or skip)
 * No silent edits (proposals.ts): an update of an existing entry is written
 * only when an agent decided it and the entry has no open audit. Otherwise
 * it becomes a proposal for a person (`skipped: proposed_no_agent` /
 * `proposed_open_audit`), or `skipped: no_new_facts` when it would add
 * nothing. A dedup skip that would drop a fact the similar entry lacks
 * becomes a merge proposal (`proposed_dedup_new_fact`).
 * curateTurn is the legacy per-turn mode (FLOW_WIKI_LEGACY_PER_TURN=1), whose
 * rules may create from the summary when nothing similar exists.
 * Every outcome is logged, the bucket is marked curated, and the write record
 * goes on the anchor exploration only.
 */
import { z } from 'zod';
import { coerceError, MaestroError } from '../../core/errors.js';
import type { SessionBundle, WriteRecord } from '../bundle/types.js';
import type { WikiEntry } from '../../knowledge/format/wiki/entries.js';
import { ensureWikiLayout } from '../../knowledge/format/wiki/layout.js';
import { appendKnowledgeLog, rebuildKnowledgeIndex, type LogOp } from '../wiki/log.js';
import { AGENT_CANDIDATE_THRESHOLD, WIKI_SEARCH_THRESHOLD, type WikiMatch, type WikiRetriever } from '../wiki/retriever.js';
import { createEntry, redactDraft, updateEntry, type EntryDraft, type WriteContext } from '../wiki/writer.js';

type Applied = { write: WriteRecord; op: LogOp; target: string };
import { SLUG_PATTERN, slugify } from '../text.js';
import { markCurated } from './buckets.js';
import { deduplicateKnowledge } from './dedup.js';
import { entriesUnderAudit, fileProposal, newFacts, type ProposalKind } from './proposals.js';
import { buildIntentDigest, isLowValue, isLowValueForExtractor, shouldSkipIntentCurate, type IntentDigest } from './gates.js';
import { INTENT_KEYS, type IntentKey } from './intent.js';

export interface CuratorInput {
  mode: 'intent' | 'turn';
  digest: IntentDigest;
  prior: WikiMatch | null;
  candidates: WikiMatch[];
}

export interface CuratorDecision {
  action: 'create' | 'update' | 'skip';
  reason?: string;
  /** For update: the entry id to update (defaults to the prior). */
  targetId?: string;
  /** The entry content; built from the digest when left out. */
  entry?: EntryDraft;
}

/** The curator agent seam: the daemon plugs an agent in; tests plug a scripted one. */
export type CurateFn = (input: CuratorInput) => Promise<CuratorDecision>;

export interface CuratorOptions {
  wikiRoot: string;
  projectSlug: string;
  retriever: WikiRetriever;
  curate?: CurateFn;
  eligibleIntents: ReadonlySet<IntentKey | string>;
  now?: () => number;
}

const draftSchema = z.object({
  type: z.enum(['context', 'entity']),
  slug: z.string().max(120).regex(SLUG_PATTERN, 'slug must be kebab-case'),
  request: z.string().trim().min(1),
  title: z.string().optional(),
  summary: z.string().trim().min(1),
  context: z.string().optional(),
  solution: z.string(),
  tags: z.array(z.string()).optional(),
  facet: z.enum(['hypothesis', 'protocol', 'command', 'failure', 'note']).optional(),
  confidence: z.number().min(0).max(1).optional(),
  command: z.string().optional(),
  persistNote: z.string().optional(),
  references: z.array(z.string()).optional(),
});

const decisionSchema = z.object({
  action: z.enum(['create', 'update', 'skip']),
  reason: z.string().optional(),
  targetId: z.string().optional(),
  entry: draftSchema.optional(),
});

/**
 * Whatever a curator answers is checked before anything is written: the
 * shape (zod), and that an update names the prior or one of the candidates it
 * was shown (an invented id never reaches the disk).
 */
export function checkDecision(raw: unknown, prior: WikiMatch | null, candidates: readonly WikiMatch[]): { decision: CuratorDecision } | { problem: string } {
  const parsed = decisionSchema.safeParse(raw);
  if (!parsed.success) return { problem: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  const d = parsed.data as CuratorDecision;
  if (d.action === 'update') {
    const target = d.targetId ?? prior?.entryId;
    if (!target) return { problem: 'update without a target and without a prior' };
    const known = new Set([prior?.entryId, ...candidates.map((c) => c.entryId)].filter(Boolean));
    if (!known.has(target)) return { problem: `update target ${target} is neither the prior nor a candidate` };
    return { decision: { ...d, targetId: target } };
  }
  return { decision: d };
}

/** Persist types of the summary model → entry facet (FORMATS §8.4). */
const FACET_OF: Record<string, EntryDraft['facet']> = { error: 'failure', snippet: 'command', decision: 'protocol', context: 'hypothesis' };

function draftFromDigest(d: IntentDigest): EntryDraft {
  const solutions = d.turns.map((t) => `- ${t.request}: ${(t.persistMeta?.solution_detail ?? t.summary).replace(/\s+/g, ' ').slice(0, 600)}`);
  const meta = d.turns.find((t) => t.persistMeta)?.persistMeta;
  return {
    type: 'context',
    slug: slugify(meta?.slug ?? '') || slugify(d.nodeTitle) || slugify(d.request) || `intent-${d.intentKey.replace(/_/g, '-')}`,
    request: d.request,
    title: d.nodeTitle || d.request,
    summary: d.turns.map((t) => t.summary).join('\n\n').slice(0, 2_000),
    context: d.files.length ? `Files: ${d.files.slice(0, 12).join(', ')}` : '',
    solution: [...solutions, ...(d.commands.length ? ['', 'Commands:', ...d.commands.slice(0, 8).map((c) => `- \`${c}\``)] : [])].join('\n'),
    tags: [...new Set([d.intentKey, ...d.turns.flatMap((t) => t.persistMeta?.tags ?? [])])].filter(Boolean),
    confidence: Math.max(0.5, ...d.turns.map((t) => t.persistMeta?.confidence ?? 0)),
    ...(meta?.type && FACET_OF[meta.type] ? { facet: FACET_OF[meta.type] } : {}),
  };
}

export class WikiCuratorService {
  private readonly now: () => number;

  constructor(private readonly options: CuratorOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The best prior for any of the digest's questions, and the agent's candidate list. */
  findPriorHitForDigest(digest: IntentDigest): { prior: WikiMatch | null; candidates: WikiMatch[] } {
    const r = this.options.retriever;
    let prior: WikiMatch | null = null;
    const candidates = new Map<string, WikiMatch>();
    for (const turn of digest.turns) {
      const q = { text: turn.request, derived: true, exclude: { sessionId: digest.sessionId, explorationId: turn.explorationId } };
      for (const m of r.searchMany({ ...q, threshold: AGENT_CANDIDATE_THRESHOLD, limit: 5 })) {
        const had = candidates.get(m.entryId);
        if (!had || had.score < m.score) candidates.set(m.entryId, m);
        if (m.score >= WIKI_SEARCH_THRESHOLD && (!prior || m.score > prior.score)) prior = m;
      }
    }
    return { prior, candidates: [...candidates.values()].sort((a, b) => b.score - a.score).slice(0, 5) };
  }

  async curateIntent(bundle: SessionBundle, intentKey: string, anchorExplorationId: string): Promise<WriteRecord | null> {
    const bucket = bundle.curation.buckets[intentKey];
    if (!bucket || bucket.curatedAt) return null;
    const finish = (write: WriteRecord, op: LogOp, target: string): WriteRecord => {
      const full = { ...write, turnCount: bucket.explorationIds.length };
      markCurated(bundle, intentKey, anchorExplorationId, full, this.now());
      appendKnowledgeLog(this.options.wikiRoot, op, target, write.reason ?? write.status, new Date(this.now()));
      return full;
    };
    if (!this.options.eligibleIntents.has(intentKey)) return finish(this.skip('intent_not_wiki_eligible'), 'skip', intentKey);
    const digest = buildIntentDigest(bundle, bucket, anchorExplorationId);
    const gate = shouldSkipIntentCurate(digest);
    if (gate) return finish(this.skip(gate), 'skip', `intent_curate:${gate}`);
    const { write, op, target } = await this.decideAndApply('intent', digest, anchorExplorationId);
    return finish(write, op, target);
  }

  /** Legacy per-turn curation of one exploration (FLOW_WIKI_LEGACY_PER_TURN=1). */
  async curateTurn(bundle: SessionBundle, explorationId: string): Promise<WriteRecord | null> {
    const e = bundle.explorations[explorationId];
    if (!e || e.write) return null;
    const record = (write: WriteRecord, op: LogOp, target: string): WriteRecord => {
      e.write = { ...write, turnCount: 1 };
      appendKnowledgeLog(this.options.wikiRoot, op, target, write.reason ?? write.status, new Date(this.now()));
      return e.write;
    };
    if (!e.summary || e.summary.status !== 'ready' || !e.summary.text.trim()) return record(this.skip('missing_summary'), 'skip', explorationId);
    const digest = buildIntentDigest(bundle, { intentKey: e.summary.flowchart?.intentKey ?? 'general', nodeTitle: e.summary.flowchart?.nodeTitle ?? e.question, explorationIds: [explorationId] }, explorationId);
    const turn = digest.turns[0];
    if (!turn || isLowValue(turn.request, turn.summary, { commands: turn.commands, files: turn.files, nodeTypes: turn.toolCount ? ['tool'] : [] })) return record(this.skip('low_value'), 'skip', explorationId);
    const { write, op, target } = await this.decideAndApply('turn', digest, explorationId);
    return record(write, op, target);
  }

  private skip(reason: string): WriteRecord {
    return { origin: 'saved', status: 'skipped', reason, completedAt: this.now() };
  }

  private async decideAndApply(mode: 'intent' | 'turn', digest: IntentDigest, anchor: string): Promise<{ write: WriteRecord; op: LogOp; target: string }> {
    const { prior, candidates } = this.findPriorHitForDigest(digest);
    let decision: CuratorDecision;
    if (this.options.curate) {
      let raw: unknown;
      try {
        raw = await this.options.curate({ mode, digest, prior, candidates });
      } catch (err) {
        const e = coerceError(err);
        const kind = e instanceof MaestroError && e.code === 'AGENT_ANSWER_INVALID' ? 'skill_invalid' : 'skill_failed';
        return { write: this.skip(`${kind}: ${e.message}`.slice(0, 200)), op: 'skip', target: anchor };
      }
      const checked = checkDecision(raw, prior, candidates);
      if ('problem' in checked) return { write: this.skip(`skill_invalid: ${checked.problem}`.slice(0, 200)), op: 'skip', target: anchor };
      decision = checked.decision;
    } else if (prior) {
      decision = { action: 'update', targetId: prior.entryId, reason: 'rules_prior_update' };
    } else if (mode === 'intent') {
      return { write: this.skip('skill_only_no_prior'), op: 'skip', target: anchor };
    } else {
      const t = digest.turns[0]!;
      const low = isLowValueForExtractor(t.request, t.summary, { commands: t.commands, files: t.files, nodeTypes: t.toolCount ? ['tool'] : [] }, t.result);
      decision = low ? { action: 'skip', reason: 'low_value' } : { action: 'create', reason: 'rules_extract' };
    }
    if (decision.action === 'skip') return { write: this.skip(decision.reason || 'agent_skip'), op: 'skip', target: anchor };
    // Redacted before dedup and proposals see it: a proposal's lines are a file in the wiki too.
    const draft = redactDraft(decision.entry ?? draftFromDigest(digest));
    const ctx = { wikiRoot: this.options.wikiRoot, projectSlug: this.options.projectSlug, source: { sessionId: digest.sessionId, explorationId: anchor }, intentKey: digest.intentKey, now: new Date(this.now()) };
    ensureWikiLayout(this.options.wikiRoot, INTENT_KEYS);
    // Dedup must see the disk as it is now, not as of the last background rescan.
    this.options.retriever.refresh();
    const entries = this.options.retriever.entries();
    try {
      const audited = entriesUnderAudit(this.options.wikiRoot);
      if (decision.action === 'update') {
        const target = entries.find((e) => e.id === (decision.targetId ?? prior?.entryId));
        if (target) return this.updateOrPropose(target, draft, ctx, decision.reason, audited);
        // The target vanished since the decision: fall back to create (FORMATS §8.4), through dedup.
      }
      const dedup = deduplicateKnowledge(
        { type: draft.type, request: draft.request, content: `${draft.summary}\n${draft.solution}`, confidence: draft.confidence ?? 0.5, source: ctx.source },
        entries,
        this.options.projectSlug,
      );
      if (dedup.action === 'skip') {
        const facts = dedup.reason === 'already_exists_same_source' ? [] : newFacts(draft, dedup.target);
        if (facts.length) return this.propose('merge', 'dedup_new_fact', dedup.target, draft, facts, ctx);
        return { write: { ...this.skip(dedup.reason), targetId: dedup.target.id, targetPath: dedup.target.relativePath }, op: 'skip', target: dedup.target.id };
      }
      if (dedup.action === 'update') return this.updateOrPropose(dedup.target, draft, ctx, dedup.reason, audited);
      return this.done(createEntry(draft, ctx), 'saved', decision.reason, 'ingest');
    } catch (err) {
      const message = coerceError(err).message;
      return { write: { origin: 'saved', status: 'failed', reason: message.slice(0, 300), completedAt: this.now() }, op: 'skip', target: anchor };
    }
  }

  /** Rewrites an existing entry only on an agent's decision and with no open audit; else a proposal (or nothing new to say). */
  private updateOrPropose(target: WikiEntry, draft: EntryDraft, ctx: WriteContext, reason: string | undefined, audited: ReadonlySet<string>): Applied {
    const why = audited.has(target.id) ? 'open_audit' : this.options.curate ? null : 'no_agent';
    if (why === null) return this.done(updateEntry(target, draft, ctx), 'updated', reason, 'update');
    const facts = newFacts(draft, target);
    if (!facts.length) return { write: { ...this.skip('no_new_facts'), targetId: target.id, targetPath: target.relativePath }, op: 'skip', target: target.id };
    return this.propose('update', why, target, draft, facts, ctx);
  }

  private propose(kind: ProposalKind, why: string, target: WikiEntry, draft: EntryDraft, facts: string[], ctx: WriteContext): Applied {
    const proposal = fileProposal(
      this.options.wikiRoot,
      { kind, reason: why, target, draft, facts, source: ctx.source, ...(ctx.intentKey ? { intentKey: ctx.intentKey } : {}) },
      ctx.now,
    );
    return {
      write: { ...this.skip(`proposed_${why}`), targetId: target.id, targetPath: target.relativePath, proposalId: proposal.id },
      op: 'skip',
      target: target.id,
    };
  }

  private done(entry: WikiEntry, status: 'saved' | 'updated', reason: string | undefined, op: LogOp): { write: WriteRecord; op: LogOp; target: string } {
    this.options.retriever.refresh();
    rebuildKnowledgeIndex(this.options.wikiRoot, this.options.retriever.entries(), new Date(this.now()));
    return {
      write: { origin: 'saved', status, ...(reason ? { reason } : {}), targetId: entry.id, targetPath: entry.relativePath, completedAt: this.now() },
      op,
      target: entry.id,
    };
  }
}
