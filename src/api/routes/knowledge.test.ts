import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { installErrorHandler } from '../errors.js';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { knowledgeRoutes } from './knowledge.js';
import { openKnowledge } from '../../knowledge/knowledge.js';
import { createKnowledgePool } from '../../knowledge/pool.js';

describe('GET /api/knowledge/*', () => {
  it('serves the same search as the in-process API, entry reads, and catalogue errors', async () => {
    const { dir } = tempRoot('mf-workflow');
    const local = openKnowledge({ env: process.env, workflowRoot: dir });
    const expected = local.search('errors cause imports', { readOnlyProbe: true });
    local.close();
    const pool = createKnowledgePool({ env: process.env });
    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await app.register(knowledgeRoutes, { pool });
    try {
      const res = await app.inject({ method: 'GET', url: `/api/knowledge/search?q=${encodeURIComponent('errors cause imports')}&readOnlyProbe=true&root=${encodeURIComponent(dir)}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...JSON.parse(JSON.stringify(expected)), retrieval: 'lexical', codeIndex: 'not-initialized', codeIndexHint: expect.any(String), sourceWeights: { wiki: 0.6, code: 0.4, reason: 'default' } });
      const kg = await app.inject({ method: 'GET', url: `/api/knowledge/search?q=install&kg=true&type=knowhow&root=${encodeURIComponent(dir)}` });
      expect(kg.json().results.map((r: { sourceType: string }) => r.sourceType)).toEqual(['knowhow']);
      const entry = await app.inject({ method: 'GET', url: `/api/knowledge/entries/${encodeURIComponent('S-20260611-k3x9')}?root=${encodeURIComponent(dir)}` });
      expect(entry.json()).toMatchObject({ id: 'spec:project:coding-conventions-001', status: 'active' });
      const list = await app.inject({ method: 'GET', url: `/api/knowledge/entries?type=knowhow&root=${encodeURIComponent(dir)}` });
      expect(list.json().count).toBe(3);
      const unknown = await app.inject({ method: 'GET', url: `/api/knowledge/entries/nope?root=${encodeURIComponent(dir)}` });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error.code).toBe('UNKNOWN_KNOWLEDGE_ID');
      const bad = await app.inject({ method: 'GET', url: `/api/knowledge/search?q=x&limit=0&root=${encodeURIComponent(dir)}` });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.message).toMatch(/--limit must be an integer 1–200/);
      const health = await app.inject({ method: 'GET', url: `/api/knowledge/health?kind=spec&root=${encodeURIComponent(dir)}` });
      expect(health.json()).toMatchObject({ ok: true, entries: 7 });
      const bogus = await app.inject({ method: 'GET', url: `/api/knowledge/health?kind=bogus&root=${encodeURIComponent(dir)}` });
      expect(bogus.statusCode).toBe(400);
      expect(bogus.json().error.message).toMatch(/^kind: "bogus" is not a knowledge kind; give spec, knowhow or wiki/);
    } finally {
      await app.close();
      pool.stop();
    }
  });

  it('a fresh search re-checks the run ledgers (a walk that grows with every run) only for the graph', async () => {
    const { dir, root } = tempRoot('mf-workflow');
    const id = writeKnowhowFile(root, 'TIP-20260801-quokka', { title: 'Quokka wrangling' }, 'Quokkas need patience.');
    const pool = createKnowledgePool({ env: process.env, syncIntervalMs: 3_600_000 });
    const app = Fastify();
    installErrorHandler(app, () => {});
    await app.register(knowledgeRoutes, { pool });
    const at = `root=${encodeURIComponent(dir)}`;
    const consumers = async () => ((await app.inject({ method: 'GET', url: `/api/knowledge/entries/${id}?${at}` })).json().neighbors as Array<{ rel: string; id: string }>).filter((n) => n.rel === 'consumed-by').map((n) => n.id);
    try {
      expect(await consumers()).toEqual([]);
      // A run that loaded the entry: its ledger says so.
      const run = join(root.workflowDir, 'sessions', 'task-t1', 'runs', 'run-1');
      mkdirSync(run, { recursive: true });
      writeFileSync(join(run, 'knowledge-delta.json'), JSON.stringify({ session_id: 'task-t1', run_id: 'run-1', inputs: [{ knowledge_id: id, signal: 'consumed' }] }));
      expect((await app.inject({ method: 'GET', url: `/api/knowledge/search?q=quokka&fresh=true&${at}` })).json().count).toBe(1);
      expect(await consumers()).toEqual([]);
      await app.inject({ method: 'GET', url: `/api/knowledge/search?q=quokka&kg=true&fresh=true&${at}` });
      expect((await consumers()).sort()).toEqual(['run:run-1', 'task:task-t1']);
    } finally {
      await app.close();
      pool.stop();
    }
  });

  it('re-checks the files for a fresh search (the CLI), not only once per throttle period', async () => {
    const { dir } = tempRoot('mf-workflow');
    const pool = createKnowledgePool({ env: process.env, syncIntervalMs: 3_600_000 });
    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await app.register(knowledgeRoutes, { pool });
    const count = async (fresh: boolean) => (await app.inject({ method: 'GET', url: `/api/knowledge/search?q=quokka&root=${encodeURIComponent(dir)}${fresh ? '&fresh=true' : ''}` })).json().count as number;
    try {
      expect(await count(false)).toBe(0);
      mkdirSync(join(dir, '.workflow', 'knowhow'), { recursive: true });
      writeFileSync(join(dir, '.workflow', 'knowhow', 'TIP-20260801-quokka.md'), '---\ntitle: "Quokka wrangling"\ntype: tip\n---\n\nQuokkas need patience.\n');
      expect(await count(false)).toBe(0); // within the hour's throttle: the warm index as it was
      expect(await count(true)).toBe(1);
    } finally {
      await app.close();
      pool.stop();
    }
  });
});
