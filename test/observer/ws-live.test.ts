/**
 * Live observer updates over the daemon's WebSocket, with a real daemon and a
 * real socket: appending to the followed Claude Code transcript publishes
 * `observer.update` (source live), a bundle written by another observer
 * process publishes too (source bundle), and a client narrowed to a project
 * still gets them. The shape is the one documented in src/observer/README.md.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { tempDir, TranscriptBuilder, type TempDir } from '../../src/observer/__fixtures__/transcript-builder.js';
import { resolveObserverConfig } from '../../src/observer/config.js';
import { ObserverEventEmitter } from '../../src/observer/events.js';
import { claudeProjectsDir, encodeProjectPath } from '../../src/observer/paths.js';
import { ObserverSession } from '../../src/observer/session.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { until } from '../helpers/wait.js';

interface WsMessage {
  type: string;
  event?: { type: string; projectId: string | null; payload: Record<string, unknown> };
}

let dir: TempDir;
let d: TestDaemon | null = null;
let ws: WebSocket | null = null;
beforeEach(() => {
  dir = tempDir('maestro-observer-ws-');
});
afterEach(async () => {
  ws?.close();
  ws = null;
  await d?.stop({ graceMs: 2000 });
  d = null;
  removeTempDirs();
  dir.cleanup();
});

describe('observer updates on the daemon WebSocket', () => {
  it('publishes an update when the followed transcript is appended, and when another process writes a bundle', async () => {
    const workspace = join(dir.path, 'ws');
    mkdirSync(workspace);
    const env = { CLAUDE_CONFIG_DIR: join(dir.path, 'claude'), FLOW_PROJECT_DIR: workspace, FLOW_WIKI_DIR: join(dir.path, 'wiki') };
    const config = resolveObserverConfig(env, workspace);
    const jsonl = join(claudeProjectsDir(env), encodeProjectPath(config.workspaceRoot), 'sess-live.jsonl');
    const b = new TranscriptBuilder(Date.now() - 60_000);
    b.user('where is the config loaded?').turn({ tools: [{ name: 'Grep', input: { pattern: 'loadConfig' } }], answer: 'src/config.ts' }).writeTo(jsonl);

    d = await startTestDaemon({}, { noOrchestrator: true, observer: config, observerFollow: true });
    const daemon = d;
    const seen: WsMessage[] = [];
    ws = new WebSocket(daemon.wsUrl('/api/ws'));
    ws.on('message', (m) => seen.push(JSON.parse(String(m)) as WsMessage));
    await new Promise((r) => ws!.once('open', r));
    // Narrowed to a project: observer updates belong to none and still arrive.
    ws.send(JSON.stringify({ type: 'subscribe', projectId: 'p_some_project' }));
    const updates = (sessionId: string) => seen.filter((m) => m.type === 'event' && m.event!.type === 'observer.update' && m.event!.payload.sessionId === sessionId).map((m) => m.event!);
    await until(daemon.bus, async () => seen.some((m) => m.type === 'subscribed'), 'subscribed', 30_000);

    // The followed session is read at start; its first write may have gone out before the socket opened.
    await until(daemon.bus, async () => existsBundle(config.wikiRoot, 'sess-live'), 'the first bundle write', 30_000);
    const before = updates('sess-live').length;
    b.user('and where are the defaults?').turn({ tools: [{ name: 'Read', input: { file_path: 'src/defaults.ts' } }], answer: 'src/defaults.ts' }).appendTo(jsonl);
    const live = await until(daemon.bus, async () => updates('sess-live').slice(before).find((e) => e.payload.explorationCount === 2), 'an update for the appended question', 30_000);
    expect(live).toMatchObject({ type: 'observer.update', projectId: null, payload: { type: 'session.updated', sessionId: 'sess-live', explorationCount: 2, source: 'live' } });
    expect(typeof live.payload.revision).toBe('number');
    // What the update announces is what the read API serves.
    const res = await daemon.fetch(`/api/observer/sessions/sess-live`);
    const view = (await res.json()) as { explorations: Array<{ question: string }> };
    expect(view.explorations.map((e) => e.question)).toEqual(['where is the config loaded?', 'and where are the defaults?']);

    // A `maestro observe` in another process: its own emitter, only the bundle on disk is shared.
    const other = join(dir.path, 'elsewhere', 'sess-tui.jsonl');
    new TranscriptBuilder(Date.now() - 30_000).user('why does the build fail?').turn({ answer: 'a missing import' }).writeTo(other);
    await new ObserverSession({ sessionId: 'sess-tui', jsonlPath: other, wikiRoot: config.wikiRoot, workspaceRoot: config.workspaceRoot, projectSlug: config.projectSlug, events: new ObserverEventEmitter() }).step();
    const fromBundle = await until(daemon.bus, async () => updates('sess-tui')[0], 'an update for the bundle another process wrote', 30_000);
    expect(fromBundle.payload).toMatchObject({ type: 'session.updated', sessionId: 'sess-tui', explorationCount: 1, runningExplorationId: null, source: 'bundle' });
  });
});

function existsBundle(wikiRoot: string, id: string): boolean {
  try {
    return readFileSync(join(wikiRoot, 'sessions', id, 'bundle.json'), 'utf8').length > 0;
  } catch {
    return false;
  }
}
