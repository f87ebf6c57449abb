import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { installErrorHandler } from '../errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, type TempDir } from '../../observer/__fixtures__/transcript-builder.js';
import { ObserverEventEmitter, type ObserverUpdate } from '../../observer/events.js';
import { observerRoutes } from './observer.js';
import { ObserverSession } from '../../observer/session.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe('observer HTTP routes (in-process)', () => {
  it('lists sessions and serves one as the UI shows it; 404 for unknown ids, 400 for bad ids; corrupted bundles are reported', async () => {
    const wiki = join(dir.path, 'wiki');
    const updates: ObserverUpdate[] = [];
    const onUpdate = (u: ObserverUpdate) => updates.push(u);
    const events = new ObserverEventEmitter();
    events.on('update', onUpdate);
    let now = Date.parse('2026-11-20T12:00:00Z');
    for (const id of ['older', 'newer']) {
      const jsonl = join(dir.path, `${id}.jsonl`);
      new TranscriptBuilder().user(`question in ${id}`).turn({ tools: [{ name: 'Read', input: { file_path: 'a.ts' } }], answer: 'ok' }).writeTo(jsonl);
      now += 1_000;
      await new ObserverSession({ sessionId: id, jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', events, now: () => now }).step();
    }
    events.off('update', onUpdate);
    expect(updates.map((u) => u.sessionId)).toEqual(['older', 'newer']);

    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await observerRoutes(app, { wikiRoot: wiki, workspaceRoot: dir.path });
    try {
      const list = await app.inject({ method: 'GET', url: '/api/observer/sessions' });
      expect(list.statusCode).toBe(200);
      expect(list.json().sessions.map((s: { sessionId: string; isLast: boolean; explorationCount: number }) => [s.sessionId, s.isLast, s.explorationCount])).toEqual([
        ['newer', true, 1],
        ['older', false, 1],
      ]);

      const one = await app.inject({ method: 'GET', url: '/api/observer/sessions/newer' });
      expect(one.statusCode).toBe(200);
      const view = one.json();
      expect(view).toMatchObject({ sessionId: 'newer', mode: 'restore', load: { status: 'hit' } });
      expect(view.explorations[0]).toMatchObject({ id: 'exp_1', question: 'question in newer', status: 'complete', toolCount: 1, knowledge: null });
      expect(view.explorations[0].summary.text).toContain('question in newer');
      expect(view.flow.nodes.map((n: { id: string; status: string }) => [n.id, n.status])).toEqual([['newer:exp_1', 'complete']]);

      const missing = await app.inject({ method: 'GET', url: '/api/observer/sessions/nope' });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.code).toBe('UNKNOWN_SESSION');
      expect((await app.inject({ method: 'GET', url: '/api/observer/sessions/..%2Fetc' })).statusCode).toBe(400);

      writeFileSync(join(wiki, 'sessions', 'older', 'bundle.json'), '{ torn');
      const corrupted = await app.inject({ method: 'GET', url: '/api/observer/sessions/older' });
      expect(corrupted.statusCode).toBe(200);
      expect(corrupted.json()).toMatchObject({ sessionId: 'older', session: null, load: { status: 'corrupted', reason: 'parse_error' } });
    } finally {
      await app.close();
    }
  });
});
