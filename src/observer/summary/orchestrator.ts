/**
 * SummaryOrchestrator: one map of SummaryItem per exploration. It hydrates
 * from the bundle first (a restart or a restore never pays for a summary
 * twice), then generates what is missing for finished explorations through
 * the injected `summarize` (the agent provider, plugged in by the daemon), or
 * deterministically when none is given. A model failure or a malformed answer
 * falls back to the deterministic summary with the reason kept.
 */
import type { FlowchartHint, SessionBundle, SummaryItem } from '../bundle/types.js';
import { normalizeIntentKey, normalizeTitleDelta } from '../curation/intent.js';
import { buildExplorationDigest, deterministicSummary, type ExplorationDigest } from './digest.js';
import type { Exploration } from '../transcript/types.js';

export type SummarizeFn = (digest: ExplorationDigest) => Promise<SummaryItem>;

export interface SummaryOrchestratorOptions {
  summarize?: SummarizeFn;
  now?: () => number;
}

const BRANCHES = ['trunk', 'parallel', 'repair', 'merge'] as const;
const IMPORTANCE = ['high', 'medium', 'low'] as const;

/** Checks a model's SummaryItem and normalises its flowchart hint; null when unusable. */
export function validateModelSummary(raw: unknown, digest: ExplorationDigest, now: number): SummaryItem | null {
  if (!raw || typeof raw !== 'object') return null;
  const r = raw as Partial<SummaryItem>;
  if (typeof r.text !== 'string' || !r.text.trim()) return null;
  let flowchart: FlowchartHint | undefined;
  if (r.flowchart && typeof r.flowchart === 'object') {
    const f = r.flowchart;
    const delta = normalizeTitleDelta(f.titleDelta);
    flowchart = {
      nodeId: typeof f.nodeId === 'string' && f.nodeId ? f.nodeId : digest.explorationId,
      nodeTitle: typeof f.nodeTitle === 'string' && f.nodeTitle ? f.nodeTitle.slice(0, 80) : digest.question.slice(0, 48),
      parentId: typeof f.parentId === 'string' ? f.parentId : null,
      branchType: (BRANCHES as readonly string[]).includes(f.branchType as string) ? f.branchType! : 'trunk',
      importance: (IMPORTANCE as readonly string[]).includes(f.importance as string) ? f.importance! : 'medium',
      dropFromChart: f.dropFromChart === true,
      intentKey: normalizeIntentKey(f.intentKey),
      ...(delta ? { titleDelta: delta } : {}),
      ...(typeof f.titleDeltaNote === 'string' && f.titleDeltaNote ? { titleDeltaNote: f.titleDeltaNote.slice(0, 40) } : {}),
    };
  }
  return {
    explorationId: digest.explorationId,
    text: r.text.trim(),
    source: 'ai',
    status: r.status === 'failed' ? 'failed' : 'ready',
    ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
    ...(flowchart ? { flowchart } : {}),
    persistMeta: r.persistMeta && typeof r.persistMeta === 'object' ? r.persistMeta : null,
    savedAt: now,
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
    try {
      const item = validateModelSummary(await summarize(digest), digest, this.now());
      return item ?? deterministicSummary(digest, this.now(), 'model_invalid: the summary had no text');
    } catch (err) {
      return deterministicSummary(digest, this.now(), `model_failed: ${(err as Error).message ?? String(err)}`.slice(0, 200));
    }
  }
}
