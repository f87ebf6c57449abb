/**
 * The daemon's two services, started, used and stopped on a temp project the
 * way app/daemon.ts wires them: after stop() nothing of theirs is left — no
 * worker thread (counted in /proc/self/task), no handle keeping the event loop
 * alive (process.getActiveResourcesInfo), no tracked resource (lib/resources).
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openResources } from '../../src/lib/resources.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../../src/knowledge/service.js';
import { KnowledgeBridge } from '../../src/knowledge/lifecycle/bridge.js';
import { resolveObserverConfig } from '../../src/observer/config.js';
import { ObserverEventEmitter, type ObserverUpdate } from '../../src/observer/events.js';
import { ObserverService } from '../../src/observer/service.js';
import { ObserverSession } from '../../src/observer/session.js';
import { tempDir, TranscriptBuilder } from '../../src/observer/__fixtures__/transcript-builder.js';
import { tempRoot } from '../helpers/knowledge.js';
import { budget } from '../helpers/budget.js';
import { observerIn } from '../../src/app/agentSandbox.js';

/** OS threads of this process: a worker thread is one until it has exited. */
const threads = () => readdirSync('/proc/self/task').length;
const activeHandles = () => process.getActiveResourcesInfo().sort();
/** Handles open now beyond those open at `baseline` (the test runner's own come and go: fewer is fine). */
function newHandles(baseline: string[]): string[] {
  const left = [...baseline];
  return activeHandles().filter((h) => {
    const i = left.indexOf(h);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/** Polls `ok` on every turn of the event loop (a timer would itself be an active resource) until it holds or the budget ends. */
async function eventually(ok: () => boolean, what: string): Promise<void> {
  const ms = budget(30_000);
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

const spec = (sid: string, title: string) => `<spec-entry category="coding" keywords="watched" date="2026-01-01" sid="${sid}" title="${title}">\n\n### ${title}\n\n${title} says something about lanterns.\n\n</spec-entry>\n\n`;

describe('KnowledgeService and ObserverService lifecycle', () => {
  it('start, serve a search and a watched change, see a bundle written elsewhere, and leave nothing after stop', async () => {
    const { dir, root } = tempRoot('mf-workflow');
    const obsDir = tempDir('maestro-services-');
    try {
      // Start libuv's thread pool now, so that it is part of the baseline rather than a difference.
      await stat(dir);
      const baseline = { threads: threads(), handles: activeHandles(), tracked: new Set(openResources()) };

      const knowledge = new KnowledgeService({ ...resolveKnowledgeConfig({ ...process.env, MAESTRO_HOME: join(dir, '.home') }), corpusWatchFromFiles: 0, embedder: null });
      knowledge.start();
      knowledge.start(); // idempotent
      const bridge = KnowledgeBridge.forService(knowledge, process.env);
      const lc = knowledge.lifecycle;

      // A search through the pool, as the knowledge routes do.
      const page = await knowledge.pool.get(dir).searchHybrid('errors cause imports', { readOnlyProbe: true });
      expect(page.count).toBeGreaterThan(0);
      expect(knowledge.pool.size).toBe(1);

      // The orchestrator's bridge writes a brief; the service now watches that project's corpus in a thread.
      expect(bridge.briefFor({ id: 't1', title: 'lanterns' }, dir)).toContain('Knowledge reconciliation card');
      expect(knowledge.watchedFolders).toEqual([root.workflowDir]);
      expect(threads()).toBeGreaterThan(baseline.threads);
      expect(lc.corpus.watch(root.workflowDir, { waitStarted: true })).toBe(true); // it starts in the background
      lc.corpus.read(root.workflowDir); // the watcher's first answer: the full walk it keeps current from now on
      writeFileSync(join(root.workflowDir, 'specs', 'watched.md'), spec('S-20260105-0001', 'Watched rule'));
      const seen = lc.corpus.read(root.workflowDir);
      expect(seen.docs.map((d) => d.title)).toContain('Watched rule');
      expect(seen.statted).toBe(1); // only what the watcher named: it saw the write

      // The observer: a bundle written by another process's session reaches the service's subscriber.
      const workspace = join(obsDir.path, 'ws');
      const env = { CLAUDE_CONFIG_DIR: join(obsDir.path, 'claude'), FLOW_PROJECT_DIR: workspace, FLOW_WIKI_DIR: join(obsDir.path, 'wiki') };
      const config = resolveObserverConfig(env, obsDir.path);
      const updates: ObserverUpdate[] = [];
      const observer = new ObserverService({ config, events: new ObserverEventEmitter(), pollMs: 200, onUpdate: (u) => updates.push(u) });
      observer.start();
      observer.start(); // idempotent
      const transcript = join(obsDir.path, 'elsewhere', 'sess-svc.jsonl');
      new TranscriptBuilder(Date.now() - 30_000).user('why does the build fail?').turn({ answer: 'a missing import' }).writeTo(transcript);
      await new ObserverSession({ sessionId: 'sess-svc', jsonlPath: transcript, wikiRoot: config.wikiRoot, workspaceRoot: config.workspaceRoot, projectSlug: config.projectSlug, events: new ObserverEventEmitter() }).step();
      await eventually(() => updates.some((u) => u.sessionId === 'sess-svc'), 'an update for the bundle another session wrote');
      expect(updates.find((u) => u.sessionId === 'sess-svc')).toMatchObject({ type: 'session.updated', explorationCount: 1, source: 'bundle' });
      expect(openResources().length).toBeGreaterThan(baseline.tracked.size);
      expect(newHandles(baseline.handles)).toContain('FSEventWrap'); // the hub's watcher: what the check below would catch

      observer.stop();
      await knowledge.stop();
      observer.stop(); // idempotent
      await knowledge.stop();

      expect(knowledge.watchedFolders).toEqual([]);
      expect(() => knowledge.pool).toThrow(/not running/);
      // The lifecycle context went with it: no watcher, no cached row (a read parses every file again).
      expect(() => knowledge.lifecycle).toThrow(/not running/);
      expect(lc.corpus.watched).toEqual([]);
      const files = seen.docs.length;
      // A second service starts from nothing: its own context, every corpus file parsed, nothing of the first one's.
      const again = new KnowledgeService({ ...resolveKnowledgeConfig({ ...process.env, MAESTRO_HOME: join(dir, '.home') }), embedder: null });
      again.start();
      expect(again.lifecycle).not.toBe(lc);
      const fresh = again.lifecycle.corpus.read(root.workflowDir);
      expect(fresh.parsed).toBeGreaterThan(0);
      expect(fresh.docs.length).toBe(files);
      expect(again.lifecycle.corpus.read(root.workflowDir).parsed).toBe(0); // and it caches for itself
      await again.stop();
      expect(openResources().filter((r) => !baseline.tracked.has(r)).map((r) => `${r.kind} ${r.name}`)).toEqual([]);
      await eventually(() => threads() <= baseline.threads, `the worker threads exit (${threads()} threads, ${baseline.threads} before)`);
      await eventually(() => newHandles(baseline.handles).length === 0, `no handle beyond the baseline ${JSON.stringify(baseline.handles)}: ${JSON.stringify(newHandles(baseline.handles))}`);
      // Stopped: an update published now reaches no one.
      const before = updates.length;
      observer.hub.start();
      observer.hub.stop();
      expect(updates.length).toBe(before);
    } finally {
      obsDir.cleanup();
    }
  });
});

describe("the observer's agent in a daemon with the agent sandbox", () => {
  it('runs in that sandbox (the home hidden, the workspace readable); with no sandbox or no agent, nothing changes', () => {
    const dir = tempDir();
    const withAgent = resolveObserverConfig({ MAESTRO_OBSERVER_AGENT: 'claude' }, dir.path);
    const sandbox = { kind: 'bwrap' as const, required: false, hide: ['/home/ada/.ssh'], writable: ['/home/ada/.claude'] };
    expect(observerIn({ home: '/home/ada/.maestro', agentSandbox: sandbox }, withAgent).agent).toMatchObject({
      provider: { kind: 'claude' },
      sandbox: { kind: 'bwrap', hide: ['/home/ada/.maestro', '/home/ada/.ssh'], readOnly: [withAgent.workspaceRoot], writable: ['/home/ada/.claude'] },
    });
    expect(observerIn({ home: '/home/ada/.maestro', agentSandbox: null }, withAgent)).toBe(withAgent);
    const deterministic = resolveObserverConfig({ MAESTRO_OBSERVER_AGENT: 'off' }, dir.path);
    expect(observerIn({ home: '/home/ada/.maestro', agentSandbox: sandbox }, deterministic).agent).toBeNull();
    dir.cleanup();
  });
});
