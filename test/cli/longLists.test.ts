/**
 * A task split into many subtasks: `task show` and `task cancel` name the first ten and count the rest (a trial:
 * 3,000 subtasks made task show print 540 KB and task cancel one line of 100 KB); --json keeps them all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

const SUBTASKS = Array.from({ length: 25 }, (_, i) => ({ title: `Step ${i}`, complexity: 'easy', priority: 1, deps: [], ownedFiles: [], expectedOutput: null }));

describe('maestro task show and cancel: a task of many subtasks', { timeout: budget(120_000) }, () => {
  it('names ten subtasks and counts the rest', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const parent = await d.store.tasks.create({ projectId: p.id, title: 'Big job' });
      for (const s of ['queued', 'planning'] as const) await d.store.tasks.transition(parent.id, s);
      await d.store.tasks.transition(parent.id, 'plan_review', { fields: { plan: 'Many steps.', result: { kind: 'plan', subtasks: SUBTASKS } } });
      expect((await d.store.tasks.approve(parent.id, 'plan_review', 'ann')).status).toBe('waiting_children');

      const shown = await cli(['task', 'show', parent.id, ...url]);
      expect(shown.code).toBe(0);
      const line = shown.stdout.split('\n').find((l) => l.startsWith('  subtasks'))!;
      expect(line).toMatch(/^ {2}subtasks \(25\): (t_\S+ ready, ){10}… and 15 more$/);
      expect((await cliJson<{ children: unknown[] }>(['task', 'show', parent.id, ...url])).body.children).toHaveLength(25);

      const cancelled = await cli(['task', 'cancel', parent.id, ...url]);
      expect(cancelled.code).toBe(0);
      expect(cancelled.stdout.trim()).toMatch(new RegExp(`^Cancelled ${parent.id} and its 25 unfinished subtasks \\((t_\\S+ Step \\d+, ){10}… and 15 more\\)\\.$`));
    } finally {
      await d.stop();
    }
  });
});
