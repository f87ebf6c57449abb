/**
 * ObserverSession: one observed Claude Code session. Each `step()` runs the
 * two independent chains of the notes in order:
 *   1. ingest the transcript (tail) and mirror explorations into the bundle;
 *   2. prior retrieval for every question not yet searched (sync, cheap);
 *   3. summaries for finished explorations (hydrated from the bundle first);
 *   4. each new summary → evidence, intent bucket, and curation of a closed
 *      intent (or, in legacy mode, of that one turn); then the idle sweep;
 *   5. the flow graph, then one bundle write and one index update if anything
 *      changed, then an `update` event.
 * Restore mode reads only the bundle: no transcript, no live search, no writes.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { fileStamp, loadBundle, patchBundle, quarantineBundle, writeOwnedBundle, type BundleLoad, type BundleLoadReason, type BundleLoadStatus } from './bundle/store.js';
import { readSessionIndex, recordSessionInIndex } from './bundle/session-index.js';
import { updateFlow } from './bundle/flow.js';
import { createEmptyBundle, type SessionBundle, type SummaryItem } from './bundle/types.js';
import { idleSweepDue, openUncuratedBucket, recordSummary } from './curation/buckets.js';
import { WikiCuratorService, type CurateFn } from './curation/curator.js';
import { DEFAULT_CURATE_INTENTS } from './curation/intent.js';
import type { ObserverEvents } from './events.js';
import { SummaryOrchestrator, type SummarizeFn } from './summary/orchestrator.js';
import { readTranscriptFile, TranscriptTail } from './transcript/reader.js';
import type { Exploration, TranscriptState } from './transcript/types.js';
import { buildSessionView, explorationMeta, type SessionView } from './view.js';
import { bundlePath, wikiLayout, type WikiLayout } from '../knowledge/format/wiki/layout.js';
import { InMemoryWikiRetriever, type WikiRetriever } from './wiki/retriever.js';
import { buildEvidence, foreignHold, toRetrievalRecord, type SessionHold } from './sessionRecords.js';

export type { SessionHold } from './sessionRecords.js';

export interface ObserverSessionOptions {
  sessionId: string;
  jsonlPath: string;
  wikiRoot: string;
  workspaceRoot: string;
  projectSlug: string;
  mode?: 'live' | 'restore';
  retriever?: WikiRetriever;
  summarize?: SummarizeFn;
  curate?: CurateFn;
  eligibleIntents?: ReadonlySet<string>;
  legacyPerTurn?: boolean;
  /** The person confirmed taking over a wiki or bundle written for another workspace root. */
  adoptWiki?: boolean;
  /** Where this session publishes its updates (the hub's emitter when the daemon follows it); none: it publishes nothing. */
  events?: ObserverEvents;
  now?: () => number;
}

export interface StepResult {
  changed: boolean;
  newSummaries: number;
  curated: Array<{ intentKey: string | null; explorationId: string; status: string; reason?: string; targetId?: string }>;
}

export class ObserverSession {
  readonly layout: WikiLayout;
  readonly retriever: WikiRetriever;
  readonly summaries: SummaryOrchestrator;
  private readonly curator: WikiCuratorService;
  private readonly tail: TranscriptTail | null;
  private readonly now: () => number;
  private bundle!: SessionBundle;
  private load!: BundleLoad;
  /** What loadBundle found when the session was opened: said beside `load` once this process wrote the bundle. */
  private found!: { status: BundleLoadStatus; reason?: BundleLoadReason };
  /** Whether this process wrote the bundle since it opened the session. */
  private wrote = false;
  private lastWritten = '';
  /** The stamp (inode, size, mtime) of the bundle file as this session last wrote it. */
  private bundleStamp: string | null = null;
  /** Set by anything that changes the bundle; a step with nothing dirty writes nothing (no re-serialising every poll). */
  private dirty = true;
  private onceState: TranscriptState | null = null;
  /** Set when this wiki must not be written: it belongs to another workspace, or its bundle is a schema we do not read. */
  private hold: SessionHold | null = null;
  /** What became of a corrupted bundle this session set aside: kept as the load's detail after every write, so the run says so. */
  private setAside: string | null = null;
  private running: Promise<StepResult> | null = null;
  private again = false;

  constructor(private readonly options: ObserverSessionOptions) {
    this.now = options.now ?? Date.now;
    this.layout = wikiLayout(options.wikiRoot);
    this.retriever = options.retriever ?? new InMemoryWikiRetriever(options.wikiRoot, { projectSlug: options.projectSlug, now: this.now });
    this.summaries = new SummaryOrchestrator(options.sessionId, { ...(options.summarize ? { summarize: options.summarize } : {}), now: this.now });
    this.curator = new WikiCuratorService({
      wikiRoot: options.wikiRoot,
      projectSlug: options.projectSlug,
      retriever: this.retriever,
      ...(options.curate ? { curate: options.curate } : {}),
      eligibleIntents: options.eligibleIntents ?? new Set(DEFAULT_CURATE_INTENTS),
      now: this.now,
    });
    this.tail = options.mode === 'restore' ? null : new TranscriptTail(options.jsonlPath, options.sessionId, this.now);
    this.open();
  }

  get mode(): 'live' | 'restore' {
    return this.options.mode ?? 'live';
  }

  get loadResult(): BundleLoad {
    return this.load;
  }

  get sessionId(): string {
    return this.options.sessionId;
  }

  get jsonlPath(): string {
    return this.options.jsonlPath;
  }

  private ctx() {
    return { workspaceRoot: this.options.workspaceRoot };
  }

  /** Why nothing is written, when nothing is (a foreign wiki not adopted, a bundle of another schema); null otherwise. */
  get held(): SessionHold | null {
    return this.hold;
  }

  private open(): void {
    this.load = loadBundle(this.layout, this.options.sessionId, this.ctx());
    this.found = { status: this.load.status, ...(this.load.reason ? { reason: this.load.reason } : {}) };
    const adopt = this.options.adoptWiki === true && this.mode === 'live';
    const index = this.mode === 'live' ? readSessionIndex(this.layout, this.options.workspaceRoot, this.now()) : null;
    if (index?.foreignRoot && !adopt) this.hold = foreignHold(`${this.layout.sessionIndex} belongs to ${index.foreignRoot}, not ${this.options.workspaceRoot}`);
    const foreign = this.load.foreign;
    if (foreign) {
      // Shown as stored (its summaries too); written back only when the person adopts it.
      this.bundle = foreign;
      this.summaries.hydrateFromBundle(this.bundle);
      if (!adopt) {
        this.hold ??= foreignHold(this.load.detail ?? `the bundle belongs to ${foreign.meta.workspaceRoot}`);
        return;
      }
      this.bundle.meta.workspaceRoot = this.options.workspaceRoot;
      this.bundle.meta.jsonlPath = this.options.jsonlPath;
      return;
    }
    if (this.load.unknownSchema && this.mode === 'live') {
      this.hold = { reason: 'unknown_schema', detail: `${this.load.detail}. Nothing is written for this session; move the file away to rebuild it from the transcript.` };
      this.bundle = createEmptyBundle({ sessionId: this.options.sessionId, workspaceRoot: this.options.workspaceRoot, jsonlPath: this.options.jsonlPath, jsonlMtime: 0 }, this.now());
      return;
    }
    if (this.load.bundle) {
      this.bundle = this.load.bundle;
      this.summaries.hydrateFromBundle(this.bundle);
      if (this.mode === 'restore') return;
      this.bundle.meta.jsonlPath = this.options.jsonlPath;
      this.bundle.meta.workspaceRoot = this.options.workspaceRoot;
      return;
    }
    // A corrupted bundle is kept aside (never silently lost) and rebuilt from the transcript.
    const kept = this.load.status === 'corrupted' && this.mode === 'live' ? quarantineBundle(this.layout, this.options.sessionId, this.now()) : null;
    if (kept) {
      this.setAside = `${this.load.detail ?? bundlePath(this.layout, this.options.sessionId)} — set aside as ${basename(kept)}; a new bundle was started from the transcript`;
      this.load = { ...this.load, detail: this.setAside };
    }
    this.bundle = createEmptyBundle({ sessionId: this.options.sessionId, workspaceRoot: this.options.workspaceRoot, jsonlPath: this.options.jsonlPath, jsonlMtime: 0 }, this.now());
  }

  private get explorations(): readonly Exploration[] {
    return this.onceState?.explorations ?? this.tail?.state.explorations ?? [];
  }

  private get transcriptState(): TranscriptState | null {
    return this.onceState ?? this.tail?.state ?? null;
  }

  /** Reads the whole transcript once (also a final line without newline); for `--once`. */
  readOnce(): void {
    if (this.mode === 'restore') return;
    this.onceState = readTranscriptFile(this.options.jsonlPath, { sessionId: this.options.sessionId, now: this.now });
  }

  /** Mirrors explorations into the bundle and runs prior retrieval; sync, safe to call every frame. */
  ensureRetrieval(): boolean {
    if (this.mode === 'restore') return false;
    let changed = false;
    for (const e of this.explorations) {
      let b = this.bundle.explorations[e.id];
      if (b && b.question !== e.question && e.question) {
        // The transcript was replaced or rewritten: this id now holds another question.
        this.forgetExploration(e.id);
        b = undefined;
      }
      if (!b) {
        b = this.bundle.explorations[e.id] = { explorationId: e.id, question: e.question };
        changed = true;
      }
      if (b.summary && (e.continuations ?? 0) > (b.summary.continuations ?? 0)) {
        // The turn resumed after it was summarised (a Stop hook, work after a subagent): the
        // summary no longer covers the whole turn, so it is made again once the turn ends again.
        delete b.summary;
        delete this.bundle.curation.evidence[e.id];
        this.summaries.forget(e.id);
        changed = true;
      }
      if (e.status === 'running' && b.meta) {
        delete b.meta;
        changed = true;
      }
      const meta = explorationMeta(e);
      if (meta && JSON.stringify(meta) !== JSON.stringify(b.meta)) {
        b.meta = meta;
        changed = true;
      }
      if (b.retrieval !== undefined || !e.question) continue;
      const hit = this.retriever.search({ text: e.question, derived: true, exclude: { sessionId: this.options.sessionId, explorationId: e.id } });
      b.retrieval = hit ? toRetrievalRecord(hit, this.now()) : null;
      changed = true;
    }
    if (changed) this.dirty = true;
    return changed;
  }

  /**
   * The fast half of a step, synchronous: read what was appended and run
   * retrieval for new questions. The runner calls it on every file event so
   * new questions show at once even while a model is writing a summary.
   */
  pollNow(): boolean {
    if (this.mode === 'restore' || !this.tail || this.onceState) return false;
    const update = this.tail.poll();
    if (update.reset) this.dropVanished();
    return this.ensureRetrieval() || update.changed;
  }

  private forgetExploration(id: string): void {
    delete this.bundle.explorations[id];
    delete this.bundle.curation.evidence[id];
    delete this.bundle.session.flow.flowchartHints[id];
    this.summaries.forget(id);
  }

  /** After truncation or replacement: explorations the new file does not have are dropped. */
  private dropVanished(): void {
    const live = new Set(this.explorations.map((e) => e.id));
    for (const id of Object.keys(this.bundle.explorations)) if (!live.has(id)) this.forgetExploration(id);
    this.lastWritten = '';
    this.dirty = true;
  }

  /** One pass of both chains; concurrent calls coalesce into one extra pass. */
  step(): Promise<StepResult> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let result: StepResult;
      try {
        do {
          this.again = false;
          result = await this.stepOnce();
        } while (this.again);
      } finally {
        this.running = null;
      }
      return result;
    })();
    return this.running;
  }

  private async stepOnce(): Promise<StepResult> {
    const result: StepResult = { changed: false, newSummaries: 0, curated: [] };
    if (this.mode === 'restore') return result;
    this.pollNow();
    this.ensureRetrieval();
    // Write what is known before a (possibly slow) model runs, so the bundle follows the transcript.
    if (this.summaries.hasModel && this.summaries.missing(this.explorations).length) {
      if (updateFlow(this.bundle, this.explorations, this.now())) this.dirty = true;
      result.changed = this.persist();
    }
    const items = await this.summaries.generateMissing(this.explorations);
    for (const item of items) {
      result.newSummaries += 1;
      await this.onSummary(item, result);
    }
    if (!this.options.legacyPerTurn) await this.sweepIfIdle(result);
    if (updateFlow(this.bundle, this.explorations, this.now())) this.dirty = true;
    result.changed = this.persist() || result.changed;
    return result;
  }

  private async onSummary(item: SummaryItem, result: StepResult): Promise<void> {
    const e = this.explorations.find((x) => x.id === item.explorationId);
    const b = this.bundle.explorations[item.explorationId];
    if (!e || !b) return;
    b.summary = e.continuations ? { ...item, continuations: e.continuations } : item;
    this.dirty = true;
    this.bundle.curation.evidence[e.id] = buildEvidence(this.options.sessionId, e, item, this.now());
    if (item.flowchart) this.bundle.session.flow.flowchartHints[e.id] = item.flowchart;
    if (this.options.legacyPerTurn) {
      const write = await this.curator.curateTurn(this.bundle, e.id);
      if (write) result.curated.push({ intentKey: null, explorationId: e.id, status: write.status, ...(write.reason ? { reason: write.reason } : {}), ...(write.targetId ? { targetId: write.targetId } : {}) });
      return;
    }
    if (!item.flowchart) return;
    const { curate } = recordSummary(this.bundle, e.id, item.flowchart, this.now());
    if (curate) await this.curate(curate.intentKey, curate.anchorExplorationId, result);
  }

  private async curate(intentKey: string, anchor: string, result: StepResult): Promise<void> {
    if (this.hold) return;
    const write = await this.curator.curateIntent(this.bundle, intentKey, anchor);
    if (write) this.dirty = true;
    if (write) result.curated.push({ intentKey, explorationId: anchor, status: write.status, ...(write.reason ? { reason: write.reason } : {}), ...(write.targetId ? { targetId: write.targetId } : {}) });
  }

  /** The last completion time seen in the transcript, for the idle sweep and its timer. */
  lastCompletedAt(): number | null {
    let last: number | null = null;
    for (const e of this.explorations) if (e.endedAt !== undefined && (last === null || e.endedAt > last)) last = e.endedAt;
    return last;
  }

  private async sweepIfIdle(result: StepResult): Promise<void> {
    const due = idleSweepDue({
      anyRunning: this.explorations.some((e) => e.status === 'running'),
      pendingSummaries: this.summaries.pendingCount + this.summaries.missing(this.explorations).length,
      lastCompletedAt: this.lastCompletedAt(),
      now: this.now(),
    });
    const bucket = due ? openUncuratedBucket(this.bundle) : null;
    if (bucket) await this.curate(bucket.intentKey, bucket.explorationIds[bucket.explorationIds.length - 1]!, result);
  }

  private persist(): boolean {
    if (!this.dirty) return false;
    if (this.hold) {
      this.dirty = false;
      return false;
    }
    const body = JSON.stringify({ ...this.bundle, meta: { ...this.bundle.meta, updatedAt: 0, jsonlMtime: 0 } });
    if (body === this.lastWritten) {
      this.dirty = false;
      return false;
    }
    let jsonlMtime = this.bundle.meta.jsonlMtime;
    try {
      jsonlMtime = statSync(this.options.jsonlPath).mtimeMs;
    } catch {
      // transcript gone: keep the last known mtime
    }
    this.bundle.meta.jsonlMtime = jsonlMtime;
    this.bundle.meta.updatedAt = this.now();
    // This process owns the live session's bundle; the patch re-reads only to avoid racing a half-finished write,
    // and is skipped while the file is still the version written here last.
    const stamp = writeOwnedBundle(this.layout, this.bundle, this.bundleStamp);
    if (stamp !== null) this.bundleStamp = stamp;
    else {
      patchBundle(this.layout, this.options.sessionId, this.ctx(), () => this.bundle);
      this.bundleStamp = fileStamp(bundlePath(this.layout, this.options.sessionId));
    }
    recordSessionInIndex(this.layout, this.options.workspaceRoot, this.options.sessionId, { jsonlMtime, bundleUpdatedAt: this.bundle.meta.updatedAt }, this.now());
    // What the header shows: the bundle on disk is now this one (it said "miss" until the first write).
    this.wrote = true;
    this.load = { status: 'hit', bundle: this.bundle, mtimeMs: this.bundleStamp ? Number(this.bundleStamp.split(':')[2]) : null, ...(this.setAside ? { detail: this.setAside } : {}) };
    this.lastWritten = body;
    this.dirty = false;
    const running = this.explorations.find((e) => e.status === 'running');
    this.options.events?.emit('update', {
      type: 'session.updated',
      sessionId: this.options.sessionId,
      revision: this.bundle.session.flow.revision,
      explorationCount: this.explorations.length,
      runningExplorationId: running?.id ?? null,
      at: this.now(),
      source: 'live',
    });
    return true;
  }

  view(): SessionView {
    this.ensureRetrieval();
    const t = this.transcriptState;
    return buildSessionView({
      bundle: this.bundle,
      mode: this.mode,
      load: { status: this.load.status, ...(this.load.reason ? { reason: this.load.reason } : {}), ...(this.load.detail ? { detail: this.load.detail } : {}), ...(this.wrote ? { found: this.found } : {}) },
      hold: this.hold,
      explorations: this.mode === 'restore' ? null : this.explorations,
      transcript: t ? { lines: t.lines, issueCount: t.issueCount, issues: t.issues.slice(0, 20), lastPrompt: t.lastPrompt, sessionEvents: t.sessionEvents.slice(-20) } : null,
    });
  }

  /** The in-memory bundle (read-only use: tests, the HTTP layer). */
  snapshotBundle(): SessionBundle {
    return structuredClone(this.bundle);
  }
}
