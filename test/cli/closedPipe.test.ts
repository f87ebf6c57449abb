/**
 * `maestro task logs <id> | head -40`: the reader closes the pipe once it has what it wanted. The CLI
 * then stops quietly with 141 (128 + SIGPIPE, what a shell reports for `yes | head -1`), never an
 * unhandled 'error' event with a stack trace. A real daemon in this process, the CLI as a child
 * process whose stdout is a pipe this test closes after the first chunk.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { budget } from '../helpers/budget.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { cleanEnv, gitRepo, startCli } from './helpers.js';

afterEach(() => removeTempDirs());

/** About 4 MB of transcript: sixty times a pipe's 64 KiB buffer, so the CLI is still writing when the pipe closes. */
const LINES = 20_000;

describe('maestro with its output piped into a reader that stops early', () => {
  it('stops quietly with exit 141 when the pipe closes, with no EPIPE stack on stderr', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const project = await d.store.projects.create({ name: 'p', repoPath: gitRepo() });
      const task = await d.store.tasks.create({ projectId: project.id, title: 'A long transcript' });
      const runDir = tempDir('maestro-run-');
      await d.store.runs.create({ taskId: task.id, kind: 'execute', model: 'sonnet', traceId: 'trace-1', attempt: 1, runDir });
      const line = (i: number) => `${JSON.stringify({ at: i, stage: 'execute', role: 'agent', text: `line ${i}: ${'x'.repeat(180)}` })}\n`;
      writeFileSync(join(runDir, 'transcript.jsonl'), Array.from({ length: LINES }, (_, i) => line(i)).join(''));

      const child = startCli(['task', 'logs', task.id, '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
      const untrack = trackResource('process', `cli ${child.pid}`, () => child.kill('SIGKILL'));
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      let first = '';
      // Like `head`: take the first chunk, then close the read end at once.
      child.stdout!.once('data', (b: Buffer) => {
        first = b.toString();
        child.stdout!.destroy();
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      untrack();

      // The line naming the run, then the transcript (the first chunk may hold only that line).
      expect(first).toMatch(/^Run \S+ of \S+: execute, running\.\n(\[execute\] agent: line 0: x+\n)?/);
      expect(stderr).not.toContain("Unhandled 'error'");
      expect(stderr).not.toContain('EPIPE');
      expect(stderr).toBe('');
      expect(code).toBe(141);
    } finally {
      await d.stop();
    }
  }, budget(120_000));
});
