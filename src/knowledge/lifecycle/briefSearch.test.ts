/**
 * What a run's brief reads from the index: in the daemon it goes through the
 * KnowledgeService's pool (one warm handle per project, shared with the
 * knowledge routes) instead of opening, scanning and closing an index for
 * every run start; it still sees files written just before, and writes no
 * exposure count. It checks only the spec and knowhow files, never the run
 * ledgers (a walk that grows with every run the project has had), and keeps
 * its keyword index until the index changes. Without a service (a one-shot
 * process) the bridge opens and closes its own handle, as before.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { appendSpecEntry } from '../format/specWriter.js';
import { INDEX_FILE } from '../index/store.js';
import { openKnowledge } from '../knowledge.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../service.js';
import { KnowledgeBridge } from './bridge.js';

const HOUR = 3_600_000;

/** Rows of the index's `files` table from this source. */
function indexedFiles(workflowDir: string, source: string): number {
  const db = new Database(join(workflowDir, INDEX_FILE), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM files WHERE source = ?').pluck().get(source) as number;
  } finally {
    db.close();
  }
}

/** A run's knowledge ledger that consumed `id`, as the orchestrator's runs leave them under `.workflow/sessions/`. */
function writeLedger(workflowDir: string, sid: string, rid: string, id: string): void {
  const dir = join(workflowDir, 'sessions', sid, 'runs', rid);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'knowledge-delta.json'), JSON.stringify({ session_id: sid, run_id: rid, inputs: [{ knowledge_id: id, signal: 'consumed' }] }));
}

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

  it("checks the spec and knowhow files, not the run ledgers, which a knowledge search still indexes", async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    const id = writeKnowhowFile(root, 'TIP-20260801-lantern-wick', { title: 'Lantern wick trimming' }, 'Trim the lantern wick before lighting it.');
    for (let t = 0; t < 3; t++) for (let r = 0; r < 2; r++) writeLedger(root.workflowDir, `task-t${t}`, `run-${r}`, id);
    const service = new KnowledgeService({ ...resolveKnowledgeConfig(process.env), watchCorpus: false, embedder: null });
    service.start();
    try {
      const bridge = KnowledgeBridge.forService(service, process.env);
      expect(bridge.briefFor({ id: 't1', title: 'Trim the lantern wick' }, dir)).toContain('Lantern wick trimming');
      expect(indexedFiles(root.workflowDir, 'knowhow')).toBe(11);
      expect(indexedFiles(root.workflowDir, 'ledger')).toBe(0);
      // A search from the knowledge routes scans every source: the ledgers' consumed-by edges are there for it.
      await service.pool.get(dir, true).searchHybrid('lantern', { readOnlyProbe: true });
      expect(indexedFiles(root.workflowDir, 'ledger')).toBe(6);
      // The next brief's partial check leaves the other sources' files as they are.
      bridge.briefFor({ id: 't2', title: 'Trim the lantern wick' }, dir);
      expect(indexedFiles(root.workflowDir, 'ledger')).toBe(6);
      expect(service.pool.get(dir, true).neighbors(id).filter((n) => n.rel === 'consumed-by')).not.toHaveLength(0);
    } finally {
      await service.stop();
    }
  });

  it('keeps its keyword index until the index changes, through its own check or another process', async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    appendSpecEntry(root, { category: 'coding', title: 'Lantern safety', content: 'Never leave a lit lantern alone.', keywords: ['lantern'] });
    const service = new KnowledgeService({ ...resolveKnowledgeConfig(process.env), watchCorpus: false, embedder: null });
    service.start();
    try {
      const bridge = KnowledgeBridge.forService(service, process.env);
      const k = service.pool.get(dir, true);
      const specsOf = (title: string) => service.brief(root, title, { specs: 5, search: 0 }).specs.map((h) => h.title);
      expect(specsOf('Carry the lantern')).toEqual(['Lantern safety']);
      // Nothing changed: the same index, not one built again.
      const index = k.keywordIndex();
      expect(k.keywordIndex()).toBe(index);
      expect(specsOf('Carry the lantern')).toEqual(['Lantern safety']);
      expect(k.keywordIndex()).toBe(index);
      // A spec added: the brief's own check sees the file change, and the keyword index is built again.
      appendSpecEntry(root, { category: 'coding', title: 'Lantern fuel', content: 'Use lamp oil.', keywords: ['lantern'] });
      expect(specsOf('Carry the lantern').sort()).toEqual(['Lantern fuel', 'Lantern safety']);
      // Another process (a one-shot command) syncs the same index file first: the files table is already up to
      // date when the brief checks, and the other connection's commit is what says the keyword index is stale.
      appendSpecEntry(root, { category: 'coding', title: 'Lantern glass', content: 'Clean it cold.', keywords: ['lantern'] });
      const other = openKnowledge({ workflowRoot: dir, includeGlobal: true, embedder: null, env: { ...process.env, MAESTRO_HOME: root.home } });
      try {
        expect(other.sync().changedFiles).toBe(1);
      } finally {
        other.close();
      }
      expect(specsOf('Carry the lantern').sort()).toEqual(['Lantern fuel', 'Lantern glass', 'Lantern safety']);
      expect(bridge.briefFor({ id: 't1', title: 'Carry the lantern' }, dir)).toContain('Lantern glass');
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
