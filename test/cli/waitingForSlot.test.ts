/**
 * A ready task whose dependencies are done, in a project whose places on the daemon are all taken (two tasks,
 * one of them waiting for an answer): `task show` says why it does not start and which tasks hold the places,
 * where it used to say nothing (a trial: two open questions stalled a project without a word).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

describe('maestro task show: a task waiting for a place', { timeout: budget(120_000) }, () => {
  it('names the tasks that hold the project\'s places, and the one waiting for an answer', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const owner = d.config.name;
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const asking = await d.store.tasks.create({ projectId: p.id, title: 'Asks a question' });
      const working = await d.store.tasks.create({ projectId: p.id, title: 'At work' });
      const next = await d.store.tasks.create({ projectId: p.id, title: 'Next' });
      const start = async (id: string) => {
        const { attempt } = await d.store.tasks.claim(id, owner, 60_000);
        await d.store.tasks.advance({ id, owner, attempt }, 'queued', 'executing');
        return { id, owner, attempt };
      };
      const fence = await start(asking.id);
      // One place of two taken: nothing to say.
      expect((await cliJson<{ waitingForSlot: unknown }>(['task', 'show', next.id, '--json', ...url])).body.waitingForSlot).toBeNull();
      await d.store.tasks.advance(fence, 'executing', 'awaiting_input');
      await start(working.id);
      const limit = d.config.maxConcurrentRunsPerProject;
      expect(limit).toBe(2);
      const shown = await cliJson<{ waitingForSlot: { limit: number; held: Array<{ id: string; status: string }> } }>(['task', 'show', next.id, '--json', ...url]);
      expect(shown.body.waitingForSlot).toEqual({
        limit: 2,
        held: expect.arrayContaining([
          { id: asking.id, title: 'Asks a question', status: 'awaiting_input' },
          { id: working.id, title: 'At work', status: 'executing' },
        ]),
      });
      expect(shown.body.waitingForSlot.held).toHaveLength(2);
      const text = await cli(['task', 'show', next.id, ...url]);
      expect(text.stdout).toContain('It waits for a place: the daemon takes at most 2 tasks of this project at a time (maxConcurrentRunsPerProject), and these hold them: ');
      expect(text.stdout).toContain(`${asking.id} "Asks a question" (awaiting_input)`);
      expect(text.stdout).toContain('One waits for your answer and keeps its place until you reply (maestro task show <id> shows the question).');
      // A task whose own dependency is not done waits for that, not for a place.
      const later = await d.store.tasks.create({ projectId: p.id, title: 'Later', deps: [working.id] });
      expect((await cliJson<{ waitingForSlot: unknown }>(['task', 'show', later.id, '--json', ...url])).body.waitingForSlot).toBeNull();
    } finally {
      await d.stop();
    }
  });
});
