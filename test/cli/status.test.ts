/**
 * `maestro status` names what waits for a person (a gate, a question, a task that stopped), each with what to run
 * next, and counts what it does not list; a daemon with nothing waiting prints no such section.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskStatus } from '../../src/core/status.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cliFor } from './helpers.js';
import { waitingLines } from '../../src/cli/commands/status.js';

afterEach(() => removeTempDirs());

describe('maestro status', () => {
  it('lists the tasks waiting for you with their next command, in the task list\'s order, and no section when none waits', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const project = await d.store.projects.create({ name: 'shop', repoPath: tempDir(), config: {} });
      const make = async (title: string, path: TaskStatus[]) => {
        const task = await d.store.tasks.create({ projectId: project.id, title });
        for (const s of path) await d.store.tasks.transition(task.id, s);
        return task.id;
      };
      await make('Still queued', []);
      expect((await cli(['status', ...url])).stdout).not.toContain('Waiting for you');

      const review = await make('Review me', ['queued', 'executing', 'reviewing', 'exec_review']);
      const question = await make('Ask me something', ['queued', 'executing', 'awaiting_input']);
      const stuck = await make('Stuck', ['queued', 'executing', 'needs_attention']);
      const plan = await make('Plan me', ['queued', 'planning', 'plan_review']);

      const text = await cli(['status', ...url]);
      expect(text.code).toBe(0);
      const section = text.stdout.slice(text.stdout.indexOf('Waiting for you')).split('\n').filter(Boolean);
      // In the task list's order (created_at, then id): tasks made in one millisecond come in their ids' order.
      expect(section[0]).toBe('Waiting for you (4):');
      expect(section.slice(1).sort()).toEqual([
        `  ${review}  exec_review  Review me: maestro task diff ${review}, then maestro task approve ${review} (or reject --reason …)`,
        `  ${question}  awaiting_input  Ask me something: maestro task show ${question} (its question), then maestro task reply ${question} <answer>`,
        `  ${stuck}  needs_attention  Stuck: maestro task show ${stuck} (why it stopped, and the ways out)`,
        `  ${plan}  plan_review  Plan me: maestro task show ${plan} (its plan), then maestro task approve ${plan} (or reject --reason …)`,
      ].sort());

      const json = await cliJson<{ waitingForYou: Array<{ id: string; status: string }> }>(['status', ...url]);
      const listed = await d.store.tasks.list({ status: ['plan_review', 'spec_review', 'exec_review', 'awaiting_input', 'needs_attention'] });
      expect(json.body.waitingForYou.map((t) => [t.id, t.status])).toEqual(listed.map((t) => [t.id, t.status]));
      expect(json.body.waitingForYou.map((t) => t.id).sort()).toEqual([review, question, stuck, plan].sort());
    } finally {
      await d.stop();
    }
  });

  it('lists the first 20 and counts the rest from every project', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      for (const name of ['one', 'two']) {
        const project = await d.store.projects.create({ name, repoPath: tempDir(), config: {} });
        for (let i = 0; i < 12; i++) {
          const task = await d.store.tasks.create({ projectId: project.id, title: `${name} ${i}` });
          for (const s of ['queued', 'executing', 'needs_attention'] as const) await d.store.tasks.transition(task.id, s);
        }
      }
      const lines = (await cli(['status', '--url', d.url])).stdout.split('\n');
      const at = lines.indexOf('Waiting for you (24):');
      expect(at).toBeGreaterThan(0);
      expect(lines.slice(at + 1).filter((l) => /^  t_\S+  needs_attention  /.test(l))).toHaveLength(20);
      expect(lines).toContain('  and 4 more: maestro task list --status plan_review,spec_review,exec_review,awaiting_input,needs_attention');
    } finally {
      await d.stop();
    }
  });

  it('counts what it does not list, with the command that lists it all', () => {
    const lines = waitingLines([{ id: 't_1', projectId: 'p', parentId: null, title: 'One', status: 'exec_review', priority: 0, complexity: 'easy', version: 1, deps: [], createdAt: 0, updatedAt: 0 }], 25);
    expect(lines[0]).toBe('Waiting for you (25):');
    expect(lines.at(-1)).toBe('  and 24 more: maestro task list --status plan_review,spec_review,exec_review,awaiting_input,needs_attention');
  });
});
