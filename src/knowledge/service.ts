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
 *   MAESTRO_EMBEDDINGS_* setting fails the search that needs it, as before),
 *   shared by search and the reconciliation's semantic signal; its ONNX
 *   sessions are released by `stop()`;
 * - the lifecycle context (lifecycle/context.ts): the reconciliation corpus
 *   rows of every folder read, the warmed semantic vectors and the interned
 *   keys of prepared corpora, which every lifecycle operation is given; built
 *   by `start()`, dropped by `stop()`;
 * - the brief of the orchestrator's KnowledgeBridge
 *   (`KnowledgeBridge.forService`): each run's brief reads the pool's warm
 *   handle for the project (its keyword index kept until the index changes)
 *   instead of opening, scanning and closing an index per run.
 *
 * The daemon builds one (`app/daemon.ts`); a one-shot CLI command builds the
 * same service with `oneShot` (no scan throttle, no watcher) and opens one
 * handle with `open()`. `start()` and `stop()` are idempotent; after `stop()`
 * no thread, watcher or handle of this service is left.
 *
 * Still process-wide, on purpose: the lazily imported modules (TypeScript,
 * tree-sitter and its grammars, onnxruntime), which are the same for every
 * service, and the corpus lock's re-entrancy count (a lock is held by a
 * process). test/architecture/state.test.ts lists them.
 */
import { openKnowledge, type BriefLimits, type Knowledge, type KnowledgeOptions } from './knowledge.js';
import { briefOf, type BriefKnowledge } from './lifecycle/briefSearch.js';
import type { WorkflowRoot } from './format/root.js';
import { createKnowledgePool, type KnowledgePool } from './pool.js';
import { closeLifecycleContext, createLifecycleContext, type LifecycleContext } from './lifecycle/context.js';
import { embedderFromEnv, type Embedder } from './vectors/embeddings.js';

const SECOND = 1000;

export interface KnowledgeConfig {
  /** Where MAESTRO_HOME, FLOW_* and MAESTRO_EMBEDDINGS_* are read from. */
  env: NodeJS.ProcessEnv;
  /** Minimum time between file scans of a warm index: 1 s in the daemon, 0 (every call) for a one-shot command. */
  syncIntervalMs: number;
  /** Watch reconciliation corpora (a long-lived process gains; a one-shot command would only pay the thread start). */
  watchCorpus: boolean;
  /** From how many files a watched corpus uses its watcher thread (ledger/corpusDocs.ts WATCH_FROM_FILES unless given; tests set 0). */
  corpusWatchFromFiles?: number;
  /** An embedder given by the host (tests), null for none; undefined: from MAESTRO_EMBEDDINGS_* on first use. */
  embedder?: Embedder | null;
  /** The folders outside a project its linked workspaces may name (root.ts linkedWorkspaces): the daemon's registered projects'. */
  workspaceAllowed?: (dir: string) => boolean;
}

/** The daemon's knowledge settings, or a one-shot command's. */
export function resolveKnowledgeConfig(env: NodeJS.ProcessEnv, opts: { oneShot?: boolean } = {}): KnowledgeConfig {
  return opts.oneShot ? { env, syncIntervalMs: 0, watchCorpus: false } : { env, syncIntervalMs: 1 * SECOND, watchCorpus: true };
}

export class KnowledgeService {
  private poolInstance: KnowledgePool | null = null;
  private lifecycleInstance: LifecycleContext | null = null;
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
    this.poolInstance = createKnowledgePool({ syncIntervalMs: this.config.syncIntervalMs, env: this.config.env, embedder: () => this.embedder(), workspaceAllowed: this.config.workspaceAllowed });
    this.lifecycleInstance = createLifecycleContext({ embedder: () => this.embedder(), watchFromFiles: this.config.corpusWatchFromFiles });
  }

  /** What the lifecycle operations keep between calls (review, promote, audit, the bridge); fresh for each started service. */
  get lifecycle(): LifecycleContext {
    if (!this.lifecycleInstance || this.stopping) throw new Error('the knowledge service is not running: start() it first');
    return this.lifecycleInstance;
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
    if (this.lifecycle.corpus.watch(workflowDir)) this.watched.add(workflowDir);
  }

  /**
   * A run's brief (lifecycle/briefSearch.ts) from the pool's warm handle for the project: its spec and knowhow files
   * re-checked first, whatever the pool's scan throttle (a spec promoted just before the run starts is in its brief).
   * A read-only probe: no exposure count is written.
   */
  brief(root: WorkflowRoot, text: string, limits: BriefLimits): BriefKnowledge {
    return briefOf(this.pool.get(root.projectDir, root.includeGlobal), text, limits);
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
    this.watched.clear();
    const lc = this.lifecycleInstance;
    this.lifecycleInstance = null;
    // Every watcher thread has exited once this settles; the rows, vectors and keys go with the context.
    if (lc) await closeLifecycleContext(lc);
    // The embedder's own resources (ONNX sessions); a host-given embedder is the host's to release.
    const e = this.resolvedEmbedder;
    this.resolvedEmbedder = this.config.embedder;
    if (e && this.config.embedder === undefined) await e.close?.();
  }
}
