/**
 * The search half of a run's brief: in the daemon it goes through the
 * KnowledgeService's pool (one warm handle per project, shared with the
 * knowledge routes) instead of opening, scanning and closing an index for
 * every run start; it still sees files written just before, and writes no
 * exposure count. Without a service (a one-shot process) the bridge opens and
 * closes its own handle, as before.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { INDEX_FILE } from '../index/store.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../service.js';
import { KnowledgeBridge } from './bridge.js';

const HOUR = 3_600_000;

function exposureHits(workflowDir: string): number {
  const db = new Database(join(workflowDir, INDEX_FILE), { readonly: true });
  try {
    return db.prepare('SELECT coalesce(sum(hits), 0) FROM exposure').pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('the brief search', () => {
  it("goes through the daemon's service: one warm handle for every run start, files re-checked, no exposure written", async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    writeKnowhowFile(root, 'TIP-20260801-lantern-wick', { title: 'Lantern wick trimming' }, 'Trim the lantern wick before lighting it.');
    // The daemon's settings, except a scan throttle of an hour: only the brief's own re-check can see a new file.
    const service = new KnowledgeService({ ...resolveKnowledgeConfig(process.env), syncIntervalMs: HOUR, watchCorpus: false, embedder: null });
    service.start();
    try {
      const bridge = KnowledgeBridge.forService(service, process.env);
      expect(bridge.briefFor({ id: 't1', title: 'Trim the lantern wick' }, dir)).toContain('Lantern wick trimming');
      expect(service.pool.opened).toBe(1);
      // A file written after the first brief, within the throttle: the next run's brief cites it.
      writeKnowhowFile(root, 'TIP-20260801-lantern-glass', { title: 'Lantern glass cleaning' }, 'Clean the lantern glass with vinegar.');
      expect(bridge.briefFor({ id: 't2', title: 'Clean the lantern glass' }, dir)).toContain('Lantern glass cleaning');
      expect(bridge.briefFor({ id: 't3', title: 'Lantern glass and wick' }, dir)).toContain('Lantern');
      // Three run starts, one handle: the one the knowledge routes search for `maestro search` in the project
      // (root and global specs, as a run's brief reads them).
      expect(service.pool.opened).toBe(1);
      expect(service.pool.size).toBe(1);
      expect((await service.pool.get(dir, true).searchHybrid('lantern', { readOnlyProbe: true })).count).toBe(2);
      expect(service.pool.opened).toBe(1);
      // A read-only probe: the briefs bumped no exposure count.
      expect(exposureHits(root.workflowDir)).toBe(0);
    } finally {
      await service.stop();
    }
  });

  it('opens and closes an index of its own without a service (a one-shot process)', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    writeKnowhowFile(root, 'TIP-20260801-lantern-wick', { title: 'Lantern wick trimming' }, 'Trim the lantern wick before lighting it.');
    const brief = new KnowledgeBridge().briefFor({ id: 't1', title: 'Trim the lantern wick' }, dir);
    expect(brief).toContain('## Relevant knowledge (search)');
    expect(brief).toContain('Lantern wick trimming');
    expect(exposureHits(root.workflowDir)).toBe(0);
  });
});
