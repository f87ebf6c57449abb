/**
 * Hand-built transcripts in the real Claude Code schema (__fixtures__/claude-code/):
 * each goes through an ObserverSession and the bundle written to disk is
 * asserted, since the bundle is what GUI-Anything and the board read.
 */
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from './__fixtures__/transcript-builder.js';
import type { SessionBundle } from './bundle/types.js';
import { ObserverSession } from './session.js';
import { readTranscriptFile } from './transcript/reader.js';

const FIXTURES = fileURLToPath(new URL('./__fixtures__/claude-code/', import.meta.url));

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

/** Observes one fixture once (as `maestro observe --once` does) and returns the bundle on disk and the view. */
async function observe(name: string, now = Date.parse('2026-11-20T12:00:00.000Z')) {
  const jsonl = join(dir.path, 'projects', `${name}.jsonl`);
  mkdirSync(join(dir.path, 'projects'), { recursive: true });
  copyFileSync(join(FIXTURES, `${name}.jsonl`), jsonl);
  const wiki = join(dir.path, 'wiki');
  const session = new ObserverSession({ sessionId: name, jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'shop', now: () => now });
  session.readOnce();
  await session.step();
  const bundle = JSON.parse(readFileSync(join(wiki, 'sessions', name, 'bundle.json'), 'utf8')) as SessionBundle;
  return { bundle, view: session.view() };
}

describe('Claude Code transcripts, as bundles', () => {
  it('/compact and its continuation summary belong to the session, not to a question', async () => {
    const { bundle, view } = await observe('compact');
    expect(Object.values(bundle.explorations).map((e) => [e.explorationId, e.question, e.meta?.status])).toEqual([
      ['exp_1', 'Why does checkout time out under load?', 'complete'],
      ['exp_2', 'Raise the timeout to 15 s and add a retry', 'complete'],
    ]);
    expect(view.transcript!.sessionEvents.map((e) => [e.kind, e.explorationId])).toEqual([
      ['compact', 'exp_1'],
      ['compact', 'exp_1'],
      ['compact-summary', 'exp_1'],
    ]);
    // GUI-Anything's meta: the token total as a number, the breakdown beside it.
    expect(bundle.explorations.exp_1!.meta).toMatchObject({ tokens: 175, tokenBreakdown: { input: 50, output: 25, cacheRead: 100, cacheWrite: 0 }, toolSummary: 'Grep×1', durationMs: 5_000 });
  });

  it('an in-file subagent works for the exploration that started it: counted there, listed nested, and the answer after it is kept', async () => {
    const { bundle, view } = await observe('sidechain');
    expect(Object.keys(bundle.explorations)).toEqual(['exp_1']);
    const meta = bundle.explorations.exp_1!.meta!;
    expect(meta).toMatchObject({ status: 'complete', toolCount: 3, errorCount: 1, toolSummary: 'Task×1 · Grep×1 · Read×1', durationMs: 11_000 });
    expect(meta.subagents).toEqual([{ prompt: 'Search the auth code for where the token expiry is set', toolCount: 2, errorCount: 1 }]);
    // Sidechain usage is the exploration's too.
    expect(meta.tokens).toBe(10 + 5 + 100 + 10 + 120 + 10 + 130 + 20 + 20 + 12);
    expect(view.explorations[0]!.subagents).toEqual([{ prompt: 'Search the auth code for where the token expiry is set', toolCount: 2, errorCount: 1, toolSummary: 'Grep×1 · Read×1' }]);
    expect(bundle.curation.evidence.exp_1!.nodes.at(-1)).toMatchObject({ type: 'response', label: 'The expiry is set in src/auth/session.ts (expiresIn: 60).' });
  });

  it('work after end_turn (a Stop hook sending the agent back) stays in its exploration', async () => {
    const { bundle, view } = await observe('stop-hook');
    expect(Object.values(bundle.explorations).map((e) => [e.explorationId, e.meta?.toolSummary, e.meta?.durationMs])).toEqual([
      ['exp_1', 'Edit×1 · Bash×1', 22_000],
      ['exp_2', undefined, 2_000],
    ]);
    expect(bundle.curation.evidence.exp_1).toMatchObject({ commands: ['npm test'], duration: 22_000 });
    expect(bundle.curation.evidence.exp_1!.nodes.at(-1)!.label).toBe('Fixed the two failing tests; all 14 pass.');
    expect(view.transcript!.sessionEvents.map((e) => e.kind)).toEqual([]);
  });

  it('a transcript without timestamps never gives a negative duration, and tokens are left out when none were used', async () => {
    // The reader's clock is later than the file's times, as when an old transcript is read today.
    const { bundle } = await observe('no-timestamps', Date.parse('2026-11-20T12:00:00.000Z'));
    const [first, second] = [bundle.explorations.exp_1!.meta!, bundle.explorations.exp_2!.meta!];
    expect(first).not.toHaveProperty('durationMs');
    expect(first.tokens).toBe(15);
    expect(second.durationMs).toBe(4_000);
    expect(second).not.toHaveProperty('tokens');
    expect(second).not.toHaveProperty('tokenBreakdown');
    expect(bundle.curation.evidence.exp_1!.duration).toBe(0);
    // The exploration opened before any timestamp starts at the first real one, not at the reader's clock.
    const state = readTranscriptFile(join(FIXTURES, 'no-timestamps.jsonl'), { now: () => Date.parse('2026-11-20T12:00:00.000Z') });
    expect(state.explorations[0]!.startedAt).toBe(Date.parse('2025-03-01T09:00:00.000Z'));
  });

  it('an error result without its call is counted; tool-summary ties keep first-use order', async () => {
    const { bundle } = await observe('orphans');
    const meta = bundle.explorations.exp_1!.meta!;
    expect(meta.errorCount).toBe(1);
    expect(meta.toolCount).toBe(5);
    // Read and Bash are both used twice: Read came first. GUI-Anything sorts the same way; the old code sorted by name.
    expect(meta.toolSummary).toBe('Read×2 · Bash×2 · Grep×1');
    expect(bundle.curation.evidence.exp_1!.nodes.slice(0, 2)).toEqual([
      { type: 'result', label: 'tool error Error: relation "orders" does not exist', status: 'error' },
      { type: 'result', label: 'tool result ok', status: 'ok' },
    ]);
  });
});

describe('a turn that resumes while observed live', () => {
  it('is summarised again when it ends again, with the work done after the Stop hook', async () => {
    const lines = readFileSync(join(FIXTURES, 'stop-hook.jsonl'), 'utf8').split('\n');
    const jsonl = join(dir.path, 'live.jsonl');
    const wiki = join(dir.path, 'wiki');
    writeFileSync(jsonl, `${lines.slice(0, 4).join('\n')}\n`);
    const now = Date.parse('2026-11-20T10:00:10.000Z');
    const session = new ObserverSession({ sessionId: 'live', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'shop', now: () => now });
    await session.step();
    expect(session.view().explorations[0]!.summary!.text).not.toContain('Bash');
    appendFileSync(jsonl, `${lines.slice(4, 8).join('\n')}\n`);
    await session.step();
    const bundle = JSON.parse(readFileSync(join(wiki, 'sessions', 'live', 'bundle.json'), 'utf8')) as SessionBundle;
    expect(bundle.explorations.exp_1!.summary!.text).toContain('Bash×1');
    expect(bundle.explorations.exp_1!.meta).toMatchObject({ toolSummary: 'Edit×1 · Bash×1', durationMs: 22_000 });
  });
});
