/**
 * What a stream's replay left out, said once however many runs it spans: a client resuming in a task's oldest run,
 * far behind (the replay reads at most OUTBOX_TAIL_BYTES of outboxes), gets one replay.truncated event naming every
 * run it left items of, over a real socket from a real daemon; `maestro task logs --follow`'s client and renderer
 * print one line for it. (The board's LiveOutput, given that event, is web/src/components/detail/TaskDetailPanel.test.tsx's.)
 */
import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type SseEvent } from '../../src/api/client.js';
import type { Run } from '../../src/core/types.js';
import { streamRenderer } from '../../src/cli/commands/taskLogs.js';
import { OUTBOX_FILE, OUTBOX_TAIL_BYTES } from '../../src/executor/protocol/outbox.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';

const TOKEN_TEXT = 60_000;

/** `count` token records of 60 KB each from seq `first`, as a worker writes them. */
function print(runDir: string, runId: string, first: number, count: number): void {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ type: 'token', stage: 'agent', text: `${first + i} ${'x'.repeat(TOKEN_TEXT)}`, seq: first + i, traceId: 'tr-1', runId, at: 1 }));
  appendFileSync(join(runDir, OUTBOX_FILE), lines.join('\n') + '\n');
}

describe('a replay spanning several runs', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop();
    d = null;
    removeTempDirs();
  });

  it('sends one replay.truncated event naming each run it left items of, and the CLI prints one line for it', async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const project = await d.store.projects.create({ name: 'p', repoPath: makeRepo(), config: {} });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Talkative', complexity: 'easy' });
    // Three runs (ids in the order made: runs made in one millisecond are listed by id); the newest printed more
    // than the replay reads, so the two before it are left out whole and its own start too.
    const runs: Run[] = [];
    for (const id of ['r_01', 'r_02', 'r_03']) {
      const run = await d.store.runs.create({ id, taskId: task.id, kind: 'execute', model: null, traceId: 'tr-1', attempt: 1, runDir: tempDir('maestro-run-'), owner: 'test' });
      print(run.runDir!, id, 1, id === 'r_03' ? Math.ceil((2 * OUTBOX_TAIL_BYTES) / TOKEN_TEXT) : 3);
      runs.push(run);
    }

    const client = new ApiClient({ url: d.url, token: d.token }, {});
    const events: SseEvent[] = [];
    const stop = new AbortController();
    // Resumed after the oldest run's first item; read up to the first item replayed.
    await client
      .readSse(`/api/tasks/${task.id}/stream`, {
        lastEventId: 'r_01:1',
        signal: stop.signal,
        onEvent: (e) => {
          events.push(e);
          if (e.event !== 'replay.truncated') stop.abort();
        },
      })
      .catch((err: Error) => {
        if (err.name !== 'AbortError') throw err;
      });

    const notices = events.filter((e) => e.event === 'replay.truncated');
    expect(notices).toHaveLength(1);
    expect(notices[0]!.id).toBeNull();
    const first = events.at(-1)!;
    expect(first.id).toMatch(/^r_03:\d+$/);
    const firstSeq = Number(first.id!.split(':')[1]);
    const gap = (runId: string, seq: number | null, bytes: unknown) => ({ runId, firstSeq: seq, unreadBytes: bytes, transcript: `/api/tasks/${task.id}/transcript?runId=${runId}` });
    const size = (i: number) => statSync(join(runs[i]!.runDir!, OUTBOX_FILE)).size;
    const leftOut = [gap('r_01', null, size(0)), gap('r_02', null, size(1)), gap('r_03', firstSeq, expect.any(Number))];
    // The fields beside `runs` name its first, as the event did when it named one run.
    expect(JSON.parse(notices[0]!.data)).toEqual({ ...leftOut[0], runs: leftOut });

    const render = streamRenderer(task.id);
    const printed = notices.map(render).join('');
    expect(printed).toBe(`\n… earlier output of 3 runs (r_01, r_02, r_03) left out here, too long to replay; \`maestro task logs ${task.id} --run r_01\`, \`--run r_02\` and \`--run r_03\` have it all\n`);
  });
});
