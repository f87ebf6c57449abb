/**
 * SummaryOrchestrator: one map of SummaryItem per exploration. It hydrates
 * from the bundle first (a restart or a restore never pays for a summary
 * twice), then generates what is missing for finished explorations through
 * the injected `summarize` (the agent provider, plugged in by the daemon), or
 * deterministically when none is given. A model failure (`model_failed: …`)
 * or a malformed answer (`model_invalid: …`) falls back to the deterministic
 * summary with the reason kept; the fallback is cached like any other item,
 * so a restart never asks the model again for that exploration.
 */
import { z } from 'zod';
import { coerceError, MaestroError } from '../../core/errors.js';
import { cutOutsideMarkers, redactSecrets } from '../../core/redact.js';
import type { FlowchartHint, SessionBundle, SummaryItem, WikiPersistMeta } from '../bundle/types.js';
import { normalizeIntentKey, normalizeTitleDelta } from '../curation/intent.js';
import { buildExplorationDigest, deterministicSummary, type ExplorationDigest } from './digest.js';
import type { Exploration } from '../transcript/types.js';

export type SummarizeFn = (digest: ExplorationDigest) => Promise<SummaryItem>;

export interface SummaryOrchestratorOptions {
  summarize?: SummarizeFn;
  now?: () => number;
}

/**
 * The seam's contract: whatever `summarize` returns is checked against the
 * SummaryItem shape (zod) before it is kept; unknown enum values in the hint
 * are normalised (an unknown titleDelta reads as continue, FORMATS §8.3).
 */
const hintSchema = z.object({
  nodeId: z.string().optional(),
  nodeTitle: z.string().trim().min(1),
  parentId: z.string().nullable().optional(),
  branchType: z.enum(['trunk', 'parallel', 'repair', 'merge']).catch('trunk'),
  importance: z.enum(['high', 'medium', 'low']).catch('medium'),
  dropFromChart: z.boolean().catch(false),
  intentKey: z.string().optional(),
  titleDelta: z.unknown().optional(),
  titleDeltaNote: z.string().optional(),
});

const persistMetaSchema = z.object({
  should_persist: z.boolean(),
  type: z.enum(['context', 'entity', 'error', 'snippet', 'decision']).optional(),
  slug: z.string().optional(),
  title: z.string().optional(),
  solution_detail: z.string().optional(),
  tags: z.array(z.string()).optional(),
  intent_key: z.string().optional(),
  confidence: z.number().min(0).max(1).optional(),
});

const modelItemSchema = z.object({
  text: z.string().trim().min(1, 'the summary had no text'),
  status: z.enum(['ready', 'failed']).catch('ready'),
  reason: z.string().optional(),
  flowchart: hintSchema.optional(),
  persistMeta: persistMetaSchema.nullable().optional(),
});

function redactPersistMeta(meta: WikiPersistMeta): WikiPersistMeta {
  return {
    ...meta,
    ...(meta.title !== undefined ? { title: redactSecrets(meta.title) } : {}),
    ...(meta.solution_detail !== undefined ? { solution_detail: redactSecrets(meta.solution_detail) } : {}),
  };
}

/** Checks a model's SummaryItem and normalises its flowchart hint; the problem when unusable. */
export function validateModelSummary(raw: unknown, digest: ExplorationDigest, now: number): { item: SummaryItem } | { problem: string } {
  const parsed = modelItemSchema.safeParse(raw);
  if (!parsed.success) return { problem: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  const r = parsed.data;
  let flowchart: FlowchartHint | undefined;
  if (r.flowchart) {
    const f = r.flowchart;
    const delta = normalizeTitleDelta(f.titleDelta);
    const title = redactSecrets(f.nodeTitle);
    const note = f.titleDeltaNote ? redactSecrets(f.titleDeltaNote) : '';
    flowchart = {
      nodeId: f.nodeId || digest.explorationId,
      nodeTitle: title.slice(0, cutOutsideMarkers(title, 80)),
      parentId: f.parentId ?? null,
      branchType: f.branchType,
      importance: f.importance,
      dropFromChart: f.dropFromChart,
      intentKey: normalizeIntentKey(f.intentKey),
      ...(delta ? { titleDelta: delta } : {}),
      ...(note ? { titleDeltaNote: note.slice(0, cutOutsideMarkers(note, 40)) } : {}),
    };
  }
  return {
    item: {
      explorationId: digest.explorationId,
      // The model may quote what it read itself; the summary is kept in the bundle and shown on the board.
      text: redactSecrets(r.text.trim()),
      source: 'ai',
      status: r.status,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(flowchart ? { flowchart } : {}),
      persistMeta: r.persistMeta ? redactPersistMeta(r.persistMeta as WikiPersistMeta) : null,
      savedAt: now,
    },
  };
}

export class SummaryOrchestrator {
  private readonly items = new Map<string, SummaryItem>();
  private readonly inFlight = new Map<string, Promise<SummaryItem>>();
  private readonly now: () => number;

  constructor(
    readonly sessionId: string,
    private readonly options: SummaryOrchestratorOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  get hasModel(): boolean {
    return Boolean(this.options.summarize);
  }

  /** Loads every ready summary the bundle holds; returns how many were new. */
  hydrateFromBundle(bundle: SessionBundle): number {
    let n = 0;
    for (const e of Object.values(bundle.explorations)) {
      if (e.summary && e.summary.status === 'ready' && !this.items.has(e.explorationId)) {
        this.items.set(e.explorationId, e.summary);
        n += 1;
      }
    }
    return n;
  }

  /** Drops a summary whose exploration no longer exists (the transcript was replaced). */
  forget(explorationId: string): void {
    this.items.delete(explorationId);
  }

  get(explorationId: string): SummaryItem | undefined {
    return this.items.get(explorationId);
  }

  all(): ReadonlyMap<string, SummaryItem> {
    return this.items;
  }

  get pendingCount(): number {
    return this.inFlight.size;
  }

  /** Which finished explorations still need a summary. */
  missing(explorations: readonly Exploration[]): Exploration[] {
    return explorations.filter((e) => e.status !== 'running' && !this.items.has(e.id) && !this.inFlight.has(e.id));
  }

  /** Generates the missing summaries in order (each sees the previous hint); resolves with the new items. */
  async generateMissing(explorations: readonly Exploration[]): Promise<SummaryItem[]> {
    const out: SummaryItem[] = [];
    for (const e of this.missing(explorations)) {
      const previous = this.previousHint(explorations, e);
      const digest = buildExplorationDigest(this.sessionId, e, previous);
      const job = this.generateOne(digest);
      this.inFlight.set(e.id, job);
      try {
        const item = await job;
        this.items.set(e.id, item);
        out.push(item);
      } finally {
        this.inFlight.delete(e.id);
      }
    }
    return out;
  }

  private previousHint(explorations: readonly Exploration[], e: Exploration): FlowchartHint | null {
    for (let i = explorations.indexOf(e) - 1; i >= 0; i -= 1) {
      const hint = this.items.get(explorations[i]!.id)?.flowchart;
      if (hint) return hint;
    }
    return null;
  }

  private async generateOne(digest: ExplorationDigest): Promise<SummaryItem> {
    const summarize = this.options.summarize;
    if (!summarize) return deterministicSummary(digest, this.now());
    let raw: unknown;
    try {
      raw = await summarize(digest);
    } catch (err) {
      const e = coerceError(err);
      // A malformed answer and a failed call are told apart in the kept reason.
      const kind = e instanceof MaestroError && e.code === 'AGENT_ANSWER_INVALID' ? 'model_invalid' : 'model_failed';
      return deterministicSummary(digest, this.now(), `${kind}: ${e.message}`.slice(0, 200));
    }
    const checked = validateModelSummary(raw, digest, this.now());
    return 'item' in checked ? checked.item : deterministicSummary(digest, this.now(), `model_invalid: ${checked.problem}`.slice(0, 200));
  }
}
