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

  it('names the dependencies still on their way, and says which wait for a person and how to answer them', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const reviewed = await d.store.tasks.create({ projectId: p.id, title: 'Add the parser' });
      for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(reviewed.id, s);
      const asking = await d.store.tasks.create({ projectId: p.id, title: 'Pick a colour' });
      for (const s of ['queued', 'executing', 'awaiting_input'] as const) await d.store.tasks.transition(asking.id, s);
      const working = await d.store.tasks.create({ projectId: p.id, title: 'At work' });
      for (const s of ['queued', 'executing'] as const) await d.store.tasks.transition(working.id, s);
      const next = await d.store.tasks.create({ projectId: p.id, title: 'Next', deps: [reviewed.id, asking.id, working.id] });
      const shown = await cliJson<{ waitingOn: unknown; stuckOn: unknown }>(['task', 'show', next.id, '--json', ...url]);
      expect(shown.body.waitingOn).toEqual([
        { id: reviewed.id, title: 'Add the parser', status: 'exec_review' },
        { id: asking.id, title: 'Pick a colour', status: 'awaiting_input' },
        { id: working.id, title: 'At work', status: 'executing' },
      ]);
      expect(shown.body.stuckOn).toEqual([]);
      const text = await cli(['task', 'show', next.id, ...url]);
      expect(text.stdout).toContain(
        `It starts when its dependencies are done: ${reviewed.id} "Add the parser" (exec_review: it waits for your approval, maestro task approve ${reviewed.id}), ` +
          `${asking.id} "Pick a colour" (awaiting_input: it asks you a question, maestro task show ${asking.id}), ${working.id} "At work" (executing).`,
      );
      // Not a word for a task that runs, nor for one whose dependencies are done.
      expect((await cliJson<{ waitingOn: unknown }>(['task', 'show', working.id, '--json', ...url])).body.waitingOn).toEqual([]);
    } finally {
      await d.stop();
    }
  });
});
