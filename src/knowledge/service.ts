/**
 * KnowledgeService: everything knowledge keeps between calls, owned by one
 * holder with a symmetric lifecycle (pg-boss style; STYLE §3). Built from one
 * resolved `KnowledgeConfig`:
 *
 * - the index pool: one warm `Knowledge` per workflow root (pool.ts);
 * - the corpus watchers: a worker thread per watched `.workflow/` folder, so
 *   reconciling a run stats only the files that changed (corpusWatch.ts);
 *   the orchestrator's KnowledgeBridge asks for them (`watchCorpus`), `stop()`
 *   ends them;
 * - the embedder, resolved from the environment once, on first use (a bad
 *   MAESTRO_EMBEDDINGS_* setting fails the search that needs it, as before);
 * - the reconciliation caches (the corpus rows of the watched folders and
 *   the interned keys of prepared corpora), dropped by `stop()`;
 * - the brief search of the orchestrator's KnowledgeBridge
 *   (`KnowledgeBridge.forService`): each run's brief searches the pool's warm
 *   handle for the project instead of opening, scanning and closing an index
 *   per run.
 *
 * The daemon builds one (`app/daemon.ts`); a one-shot CLI command builds the
 * same service with `oneShot` (no scan throttle, no watcher) and opens one
 * handle with `open()`. `start()` and `stop()` are idempotent; after `stop()`
 * no thread, watcher or handle of this service is left.
 *
 * Still process-wide (not caches of a service): the lazily imported parsers
 * (TypeScript, tree-sitter, onnxruntime), the ONNX model sessions
 * (vectors/onnxEmbedder.ts) and the row cache of folders read without a
 * watcher (lifecycle/ledger/corpusDocs.ts), which lifecycle commands reach
 * by path.
 */
import { openKnowledge, type Knowledge, type KnowledgeOptions } from './knowledge.js';
import { briefHits, type BriefHit } from './lifecycle/briefSearch.js';
import type { WorkflowRoot } from './format/root.js';
import { createKnowledgePool, type KnowledgePool } from './pool.js';
import { clearCorpusCache, unwatchCorpus, watchCorpus } from './lifecycle/ledger/corpusDocs.js';
import { forgetPreparedCorpora } from './lifecycle/reconcile/prepared.js';
import { embedderFromEnv, type Embedder } from './vectors/embeddings.js';

const SECOND = 1000;

export interface KnowledgeConfig {
  /** Where MAESTRO_HOME, FLOW_* and MAESTRO_EMBEDDINGS_* are read from. */
  env: NodeJS.ProcessEnv;
  /** Minimum time between file scans of a warm index: 1 s in the daemon, 0 (every call) for a one-shot command. */
  syncIntervalMs: number;
  /** Watch reconciliation corpora (a long-lived process gains; a one-shot command would only pay the thread start). */
  watchCorpus: boolean;
  /** An embedder given by the host (tests), null for none; undefined: from MAESTRO_EMBEDDINGS_* on first use. */
  embedder?: Embedder | null;
}

/** The daemon's knowledge settings, or a one-shot command's. */
export function resolveKnowledgeConfig(env: NodeJS.ProcessEnv = process.env, opts: { oneShot?: boolean } = {}): KnowledgeConfig {
  return opts.oneShot ? { env, syncIntervalMs: 0, watchCorpus: false } : { env, syncIntervalMs: 1 * SECOND, watchCorpus: true };
}

export class KnowledgeService {
  private poolInstance: KnowledgePool | null = null;
  private readonly watched = new Set<string>();
  private readonly handles = new Set<Knowledge>();
  private resolvedEmbedder: Embedder | null | undefined;
  private started = false;
  private stopping: Promise<void> | null = null;

  constructor(readonly config: KnowledgeConfig) {
    this.resolvedEmbedder = config.embedder;
  }

  start(): void {
    if (this.started) return;
    if (this.stopping) throw new Error('the knowledge service is stopped');
    this.started = true;
    this.poolInstance = createKnowledgePool({ syncIntervalMs: this.config.syncIntervalMs, extra: { env: this.config.env }, embedder: () => this.embedder() });
  }

  /** The warm indexes (one per workflow root); the API's knowledge routes read through it. */
  get pool(): KnowledgePool {
    if (!this.poolInstance || this.stopping) throw new Error('the knowledge service is not running: start() it first');
    return this.poolInstance;
  }

  /** One handle outside the pool (a one-shot command; other options than the pool's); closed by stop() at the latest. */
  open(opts: Omit<KnowledgeOptions, 'syncIntervalMs' | 'embedder' | 'env'> = {}): Knowledge {
    if (!this.started || this.stopping) throw new Error('the knowledge service is not running: start() it first');
    const k = openKnowledge({ ...opts, env: this.config.env, syncIntervalMs: this.config.syncIntervalMs, embedder: this.embedder() });
    this.handles.add(k);
    const close = k.close;
    return {
      ...k,
      close: () => {
        if (this.handles.delete(k)) close();
      },
    };
  }

  /** The embedder, resolved once; a bad setting throws on every call until fixed (nothing is cached then). */
  embedder(): Embedder | null {
    if (this.resolvedEmbedder === undefined) this.resolvedEmbedder = embedderFromEnv(this.config.env);
    return this.resolvedEmbedder;
  }

  /** Folders whose corpus watcher this service started (the lifecycle test reads it). */
  get watchedFolders(): readonly string[] {
    return [...this.watched];
  }

  /**
   * Watch this workflow folder's reconciliation corpus until stop() (the orchestrator's KnowledgeBridge
   * calls it for every project a run touches). A no-op when the config says no, or once stopping.
   */
  watchCorpus(workflowDir: string): void {
    if (!this.config.watchCorpus || !this.started || this.stopping) return;
    if (watchCorpus(workflowDir)) this.watched.add(workflowDir);
  }

  /**
   * A run's brief search (lifecycle/briefSearch.ts) on the pool's warm handle for the project. Its files are
   * re-checked first, as for a `fresh` route search: a spec promoted just before the run starts is in its
   * brief, whatever the pool's scan throttle. A read-only probe: no exposure count is written.
   */
  briefSearch(root: WorkflowRoot, text: string, limit: number): BriefHit[] {
    const k = this.pool.get(root.projectDir, root.includeGlobal);
    k.sync();
    return briefHits(k, text, limit);
  }

  /** Closes every index handle and ends every watcher thread (the promise settles once they have exited). */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    this.poolInstance?.stop();
    for (const k of this.handles) k.close();
    this.handles.clear();
    const dirs = [...this.watched];
    this.watched.clear();
    await Promise.all(dirs.map((d) => unwatchCorpus(d)));
    for (const d of dirs) clearCorpusCache(d);
    // A long-lived service's reconciliations filled these; a one-shot one leaves them to the rest of its process.
    if (this.config.watchCorpus) forgetPreparedCorpora();
  }
}
