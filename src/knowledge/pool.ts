/**
 * One warm `Knowledge` per workflow root, for a long-lived process (the
 * daemon). File scans are throttled (`syncIntervalMs`), so a burst of searches
 * costs one scan; handles are closed together on `stop()`.
 */
import { resolve } from 'node:path';
import { openKnowledge, type Knowledge, type KnowledgeOptions } from './knowledge.js';

export interface KnowledgePool {
  /** `includeGlobal` reads $MAESTRO_HOME/specs too (a CLI call without --workflow-root). */
  get(workflowRoot?: string, includeGlobal?: boolean): Knowledge;
  stop(): void;
}

export function createKnowledgePool(opts: { defaultRoot?: string; syncIntervalMs?: number; extra?: Omit<KnowledgeOptions, 'workflowRoot'> } = {}): KnowledgePool {
  const open = new Map<string, Knowledge>();
  let stopped = false;
  return {
    get(workflowRoot, includeGlobal = false) {
      if (stopped) throw new Error('knowledge pool is stopped');
      const root = workflowRoot ?? opts.defaultRoot;
      const key = `${root ? resolve(root) : ''}|${includeGlobal}`;
      let k = open.get(key);
      if (!k) {
        k = openKnowledge({ ...opts.extra, ...(root ? { workflowRoot: root } : {}), includeGlobal, syncIntervalMs: opts.syncIntervalMs ?? 1000 });
        open.set(key, k);
      }
      return k;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      for (const k of open.values()) k.close();
      open.clear();
    },
  };
}
