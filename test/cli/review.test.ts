/**
 * The reviewer's CLI: `task diff` against a branch that adds, deletes, renames
 * and changes binary files (plain when piped, coloured when asked, JSON), and
 * `task reject --comment` / `task approve` without --gate on any version's id.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeTaskBranch, reviewRepo } from '../helpers/reviewRepo.js';
import { cleanEnv, cliFor } from './helpers.js';
import { budget } from '../helpers/budget.js';

afterEach(() => removeTempDirs());

const ESC = '\u001b[';

describe('maestro task diff / reject --comment', () => {
  it('prints the change plainly when piped, in colour when forced, as JSON with --json; reject comments reach the next version', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      // The CLI of this daemon's home (it finds the daemon's token there, where the daemon has one).
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const repo = reviewRepo();
      const project = await d.store.projects.create({ name: 'rev', repoPath: repo, config: {} });
      const task = await d.store.tasks.create({ projectId: project.id, title: 'Change things' });

      const none = await cli(['task', 'diff', task.id, ...url]);
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/has no change to show: it has no branch yet/);

      makeTaskBranch(repo, task.id);
      const stat = await cli(['task', 'diff', task.id, '--stat', ...url]);
      expect(stat.code).toBe(0);
      expect(stat.stdout).not.toContain(ESC);
      expect(stat.stdout).toContain('A  added.ts  +2 -0');
      expect(stat.stdout).toContain('D  gone.txt  +0 -1');
      expect(stat.stdout).toContain('R  old-name.md → new-name.md  +1 -0');
      expect(stat.stdout).toContain('A  logo.png  binary');
      expect(stat.stdout).toContain('A  big.txt  +2500 -0  (collapsed)');
      expect(stat.stdout).toContain('6 files changed, 2504 insertions(+), 2 deletions(-)');

      const full = await cli(['task', 'diff', task.id, ...url]);
      expect(full.stdout).not.toContain(ESC);
      expect(full.stdout).toContain('--- a/src.ts\n+++ b/src.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n const c = 3;');
      expect(full.stdout).toContain('binary file: no lines to show');
      expect(full.stdout).toContain('large change collapsed (+2500 -0); see it with --file big.txt');

      const coloured = await cli(['task', 'diff', task.id, '--file', 'src.ts', ...url], cleanEnv({ FORCE_COLOR: '1' }));
      expect(coloured.stdout).toContain(`${ESC}32m+const b = 3;${ESC}0m`);
      expect(coloured.stdout).toContain(`${ESC}31m-const b = 2;${ESC}0m`);
      expect(coloured.stdout).not.toContain('added.ts');

      const json = await cliJson<{ files: Array<{ path: string; status: string }> }>(['task', 'diff', task.id, ...url]);
      expect(json.body.files.map((f) => `${f.status} ${f.path}`).sort()).toEqual(['added big.txt', 'added added.ts', 'added logo.png', 'deleted gone.txt', 'modified src.ts', 'renamed new-name.md'].sort());

      for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(task.id, s);
      const badLine = await cli(['task', 'reject', task.id, '--reason', 'fix', '--comment', 'src.ts:40:nope', ...url]);
      expect(badLine.code).toBe(2);
      expect(badLine.stderr).toContain('comments[0] (src.ts:40): line 40 does not exist');
      expect((await cli(['task', 'reject', task.id, '--reason', 'fix', '--comment', 'src.ts-no-line', ...url])).stderr).toContain('is not file:line:text');

      const rejected = await cliJson<{ task: Task; next: Task }>(['task', 'reject', task.id, '--reason', 'two remarks', '--comment', 'src.ts:2:b must stay 2', '--comment', 'added.ts:1:name it differently', ...url]);
      expect(rejected.code).toBe(0);
      expect(rejected.body.next.feedback).toContain('- src.ts:2 — b must stay 2\n- added.ts:1 — name it differently');

      // The old id still works: show prints the chain, actions go to the newest version, except an approval,
      // which is of the version named (the person saw v1's diff, not v2's).
      const next = rejected.body.next;
      const shown = await cli(['task', 'show', task.id, ...url]);
      expect(shown.stdout).toContain(`v1 ${task.id} superseded  ← this one`);
      expect(shown.stdout).toContain(`v2 ${next.id} ready`);
      for (const s of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(next.id, s);
      const stale = await cli(['task', 'approve', task.id, ...url]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`${task.id} was superseded by ${next.id}`);
      // At plan_review what to look at is the plan (task show), not a diff: the new version has no branch yet.
      expect(stale.stderr).toContain(`look at the new version (its plan: maestro task show ${next.id}), then approve it by its id`);
      expect((await cli(['task', 'diff', next.id, ...url])).stderr).toContain('NO_DIFF');
      expect((await d.store.tasks.get(next.id)).status).toBe('plan_review');
      const approved = await cli(['task', 'approve', next.id, ...url]);
      expect(approved.code).toBe(0);
      expect(approved.stdout).toContain(`Approved plan_review of ${next.id}`);
      const cancelled = await cli(['task', 'cancel', task.id, ...url]);
      expect(cancelled.code).toBe(0);
      expect(cancelled.stderr).toContain(`${task.id} was superseded; acting on its newest version ${next.id}`);
      expect((await d.store.tasks.get(next.id)).status).toBe('cancelled');
      // Its newest version at no gate: said, not "approve it by its id".
      const nowhere = await cli(['task', 'approve', task.id, ...url]);
      expect(nowhere.code).toBe(1);
      expect(nowhere.stderr).toContain(`Nothing was approved: the new version is cancelled, at no gate either.`);
    } finally {
      await d.stop();
    }
  }, budget(300_000));
});
