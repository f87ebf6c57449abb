/**
 * `maestro task approve --commit`: an approval tied to the commit the person looked at. `task diff` and
 * `task show` print the reviewed commit to pass; another one waiting at the gate now is refused and nothing
 * changes. A real daemon store and git repository; the review run is stood in for by the result it records.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';
import { makeTaskBranch, reviewRepo } from '../helpers/reviewRepo.js';
import { cliFor } from './helpers.js';
import { budget } from '../helpers/budget.js';

afterEach(() => removeTempDirs());

describe('maestro task approve --commit', () => {
  it('prints the reviewed commit in task diff and task show, refuses another one, approves the one reviewed', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const repo = reviewRepo();
      const project = await d.store.projects.create({ name: 'rev', repoPath: repo, config: {} });
      const task = await d.store.tasks.create({ projectId: project.id, title: 'Change things' });
      const branch = makeTaskBranch(repo, task.id);
      const reviewed = git(repo, 'rev-parse', branch);
      for (const s of ['queued', 'executing', 'reviewing'] as const) await d.store.tasks.transition(task.id, s);
      await d.store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', verdict: 'approve', next: 'exec_review', branch, commitSha: reviewed } } });
      // The branch moves after the review (another worktree's process commits on it).
      git(repo, 'checkout', '-q', branch);
      writeFileSync(join(repo, 'unreviewed.txt'), 'nobody looked at this\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'unreviewed');
      git(repo, 'checkout', '-q', 'main');
      const tip = git(repo, 'rev-parse', branch);

      const diff = await cli(['task', 'diff', task.id, '--stat', ...url]);
      expect(diff.code).toBe(0);
      expect(diff.stdout).toContain(`commit ${reviewed}\nThe branch moved: ${branch} moved after its review (reviewed ${reviewed.slice(0, 12)}, now ${tip.slice(0, 12)})`);
      expect(diff.stdout).not.toContain('unreviewed.txt');
      const shown = await cli(['task', 'show', task.id, ...url]);
      expect(shown.stdout).toContain(`  reviewed commit: ${reviewed} (maestro task diff ${task.id} shows it; approve --commit ${reviewed} approves only it)`);

      const malformed = await cli(['task', 'approve', task.id, '--commit', reviewed.slice(0, 12), ...url]);
      expect(malformed.code).toBe(2);
      // Named by the option typed, not by the API's field ("Invalid body: commit: …").
      expect(malformed.stderr).toBe("maestro: Invalid --commit: a commit is its full sha, 40 lowercase hex digits (the diff's head) [BAD_INPUT]\n");
      const stale = await cli(['task', 'approve', task.id, '--commit', tip, ...url]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toBe(`maestro: Nothing was approved: you looked at commit ${tip.slice(0, 12)} of task ${task.id}, but the change waiting at exec_review is commit ${reviewed.slice(0, 12)} now. Look at its diff again, then approve what it shows. [STALE_REVIEW]\n`);
      expect((await d.store.tasks.get(task.id)).status).toBe('exec_review');
      expect((await d.store.tasks.get(task.id)).approvals).toEqual([]);

      const approved = await cli(['task', 'approve', task.id, '--commit', reviewed, ...url]);
      expect(approved.code).toBe(0);
      expect(approved.stdout).toBe(`Approved exec_review of ${task.id} at commit ${reviewed.slice(0, 12)}; it is now merging.\n`);
    } finally {
      await d.stop();
    }
  }, budget(120_000));
});
