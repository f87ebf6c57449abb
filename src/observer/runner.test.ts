import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, type TempDir } from './__fixtures__/transcript-builder.js';
import { ObserverRunner } from './runner.js';
import { ObserverSession, type StepResult } from './session.js';
import { openResources } from '../lib/resources.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe('ObserverRunner', () => {
  it('follows a live transcript: each append becomes an updated view, and stop() releases its watchers', async () => {
    const jsonl = join(dir.path, 'live.jsonl');
    const b = new TranscriptBuilder();
    b.user('where is the retry policy defined').writeTo(jsonl);
    const session = new ObserverSession({ sessionId: 'live', jsonlPath: jsonl, wikiRoot: join(dir.path, 'wiki'), workspaceRoot: dir.path, projectSlug: 'app' });
    const steps: StepResult[] = [];
    let wake: (() => void) | null = null;
    const runner = new ObserverRunner(session, {
      pollMs: 5_000, // long: the watcher, not the poll, must deliver these updates
      onStep: (r) => {
        steps.push(r);
        wake?.();
      },
    });
    const until = async (pred: () => boolean) => {
      while (!pred()) await new Promise<void>((r) => (wake = r));
    };
    runner.start();
    runner.start(); // idempotent
    try {
      await until(() => session.view().explorations.length === 1);
      b.turn({ answer: 'In src/retry.ts' }).appendTo(jsonl);
      await until(() => session.view().explorations[0]!.status === 'complete');
      b.user('and the backoff cap?').appendTo(jsonl);
      await until(() => session.view().explorations.length === 2);
      expect(session.view().explorations.map((e) => e.status)).toEqual(['complete', 'running']);
      expect(steps.some((s) => s.newSummaries === 1)).toBe(true);
      expect(openResources().some((r) => r.kind === 'watcher')).toBe(true);
    } finally {
      runner.stop();
      runner.stop();
    }
    expect(openResources().some((r) => r.kind === 'watcher')).toBe(false);
  });
});
