/**
 * A conflict found when an approved task merges, end to end: a real daemon, real git, the scripted agent in real
 * workers. The conflict run's resolution is a change the person has not seen, so it comes back to their gate and
 * nothing reaches main until they approve it (trial 3: it merged on the old approval). Before, the task stayed
 * merging and the train merged the resolution.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { reviewedCommit } from '../../src/core/reviewed.js';

const SCRIPT = `steps:
  - match: { role: execute }
    actions:
      - write: { path: keep.txt, content: "the task's version\\n" }
  - match: { role: conflict }
    actions:
      - write: { path: keep.txt, content: "resolved: both versions\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

describe('a conflict at merge time', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /** A task on keep.txt brought to exec_review, then a person's commit to the same line on main; the task as it was reviewed. */
  async function reviewedThenMainMoves(files: Record<string, string>) {
    const repo = makeRepo({ 'keep.txt': 'original\n', ...files });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = (daemon = await startTestDaemon({ tickMs: 100 }));
    const { store, bus } = d;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Change keep', complexity: 'easy', ownedFiles: ['keep.txt'] });
    d.orchestrator.kick();
    const reviewed = await untilStatus(d, task.id, 'exec_review', ['needs_attention', 'done']);
    writeFileSync(join(repo, 'keep.txt'), "the person's version\n");
    git(repo, 'commit', '-qam', 'a person edits keep.txt');
    return { d, store, bus, repo, task, reviewed };
  }

  it('is resolved by a conflict run whose resolution waits for the person at exec_review, and merges once approved', async () => {
    // Main moves under the approved change: a person's own commit to the same line.
    const { d, store, bus, repo, task, reviewed } = await reviewedThenMainMoves({});
    const main = git(repo, 'rev-parse', 'main');
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();

    // The conflict run resolved it, and the task is back at the person's gate: nothing merged meanwhile.
    const back = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      const runs = await store.runs.list({ taskId: task.id });
      if (t.status === 'done') return Promise.reject(new Error('the resolution merged without a person'));
      return t.status === 'exec_review' && runs.some((r) => r.kind === 'conflict' && r.status === 'succeeded') ? t : null;
    }, 'exec_review after the conflict run');
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    const resolution = git(repo, 'rev-parse', `maestro/${task.id}-v1`);
    expect(resolution).not.toBe(reviewedCommit(reviewed));
    expect(reviewedCommit(back)).toBe(resolution);
    const events = (await store.events.list({ taskId: task.id, type: 'task.status', limit: 100 })).events.map((e) => e.payload);
    expect(events).toContainEqual({ from: 'merging', to: 'exec_review', reason: 'a conflict run resolved the merge: the resolution waits for approval' });
    // The gate shows the resolution as the change.
    const diff = await daemonRequest<{ head: string; files: Array<{ path: string }> }>(d, 'GET', `/api/tasks/${task.id}/diff`);
    expect(diff.body.head).toBe(resolution);
    expect(diff.body.files.map((f) => f.path)).toEqual(['keep.txt']);
    // An approval naming the commit approved before is refused: another one waits now.
    const stale = await daemonRequest<{ error: { code: string } }>(d, 'POST', `/api/tasks/${task.id}/approve`, { commit: reviewedCommit(reviewed), who: 'ada' });
    expect([stale.status, stale.body.error.code]).toEqual([409, 'STALE_REVIEW']);

    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { commit: resolution, who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(task.id)).status === 'done', 'done once the resolution is approved');
    expect(readFileSync(join(repo, 'keep.txt'), 'utf8')).toBe('resolved: both versions\n');
    // The second approval is said to be of the conflict resolution, through the API the board and task show read.
    const { body } = await daemonRequest<{ task: { approvals: Array<{ who: string; conflictResolution: boolean }> } }>(d, 'GET', `/api/tasks/${task.id}`);
    expect(body.task.approvals.map((a) => [a.who, a.conflictResolution])).toEqual([['ada', false], ['ada', true]]);
  });

  it('tells the on:conflict hook which files conflict, so a hook can ask for a person on the ones it names', async () => {
    // Main's hook: a person resolves conflicts in keep.txt; anything else goes to a conflict run.
    const { d, store, bus, task } = await reviewedThenMainMoves({ '.maestro/hooks.mjs': "const decide = (task, files) => (files.includes('keep.txt') ? 'manual' : 'auto');\nexport { decide as 'on:conflict' };\n" });
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    const parked = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'needs_attention' ? t : t.status === 'exec_review' || t.status === 'done' ? Promise.reject(new Error(`${t.status}: the hook was not asked with the files`)) : null;
    }, 'needs_attention');
    expect(parked.lastRunError).toMatch(/^MERGE_CONFLICT: the on:conflict hook asks for a person: /);
    expect((await store.runs.list({ taskId: task.id })).map((r) => r.kind)).toEqual(['execute', 'review']);
  });
});
