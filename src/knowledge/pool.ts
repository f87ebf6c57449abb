/**
 * One warm `Knowledge` per workflow root, for a long-lived process (the
 * daemon's KnowledgeService). File scans are throttled (`syncIntervalMs`), so
 * a burst of searches costs one scan; handles are closed together on `stop()`.
 */
import { resolve } from 'node:path';
import { openKnowledge, type Knowledge } from './knowledge.js';
import type { Embedder } from './vectors/embeddings.js';

export interface KnowledgePool {
  /** `includeGlobal` reads $MAESTRO_HOME/specs too (a CLI call without --workflow-root). */
  get(workflowRoot?: string, includeGlobal?: boolean): Knowledge;
  /** How many handles are open (the service's lifecycle test reads it). */
  readonly size: number;
  /** How many handles it has opened in all (a warm handle is opened once per root: the brief test reads it). */
  readonly opened: number;
  stop(): void;
}

export interface KnowledgePoolOptions {
  defaultRoot?: string;
  syncIntervalMs?: number;
  /** The owner's environment (MAESTRO_HOME, MAESTRO_UID, FLOW_*, MAESTRO_EMBEDDINGS_*): the service's config. */
  env: NodeJS.ProcessEnv;
  /** The owner's embedder, asked when a handle opens (default: each handle reads MAESTRO_EMBEDDINGS_*). */
  embedder?: () => Embedder | null;
  /** The folders outside a project its linked workspaces may name (root.ts linkedWorkspaces). */
  workspaceAllowed?: ((dir: string) => boolean) | undefined;
}

export function createKnowledgePool(opts: KnowledgePoolOptions): KnowledgePool {
  const open = new Map<string, Knowledge>();
  let stopped = false;
  let opened = 0;
  return {
    get(workflowRoot, includeGlobal = false) {
      if (stopped) throw new Error('knowledge pool is stopped');
      const root = workflowRoot ?? opts.defaultRoot;
      const key = `${root ? resolve(root) : ''}|${includeGlobal}`;
      let k = open.get(key);
      if (!k) {
        const embedder = opts.embedder ? { embedder: opts.embedder() } : {};
        const allowed = opts.workspaceAllowed ? { workspaceAllowed: opts.workspaceAllowed } : {};
        k = openKnowledge({ env: opts.env, ...embedder, ...allowed, ...(root ? { workflowRoot: root } : {}), includeGlobal, syncIntervalMs: opts.syncIntervalMs ?? 1000 });
        open.set(key, k);
        opened++;
      }
      return k;
    },
    get size() {
      return open.size;
    },
    get opened() {
      return opened;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      for (const k of open.values()) k.close();
      open.clear();
    },
  };
}
