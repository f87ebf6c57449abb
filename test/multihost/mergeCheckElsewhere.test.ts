/**
 * The merge queue with two daemons on one PostgreSQL and one shared remote (daemon/mergeQueue.ts): a change whose
 * merge with main daemon a is checking is left alone by daemon b's trains while a's run is at work (not landed
 * unchecked, not checked a second time), and once the check passed the checked commit lands exactly once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reviewedCommit } from '../../src/core/reviewed.js';
import { worktreeRoot } from '../../src/git/worktree.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { bareRemote, git } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const SCRIPT = `steps:
  - match: { role: execute, title: "Add a" }
    actions:
      - write: { path: a.txt, content: "a\\n" }
  - match: { role: execute, title: "Add b" }
    actions:
      - write: { path: b.txt, content: "b\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

/** Waits, on the merge only (both files there), for a word: a file in the worktree, which the sandboxed check sees. */
const HELD = { name: 'held', command: 'if [ -f a.txt ] && [ -f b.txt ]; then while [ ! -f go ]; do sleep 0.1; done; fi' };

describe.skipIf(!pgAvailable())('a merge check on one daemon, seen from another', () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0).reverse()) await d.stop({ graceMs: 2000 });
    removeTempDirs();
  });

  it("is not landed unchecked nor checked again by the other daemon's trains, and lands once", { timeout: budget(240_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const remote = bareRemote(tempDir('maestro-remote-'), { 'README.md': '# p\n', '.maestro/config.json': JSON.stringify({ checks: [HELD] }) });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const a = await startTestDaemon({ database: url, name: 'a', tickMs: 100 });
    daemons.push(a);
    const project = await a.store.projects.create({ name: 'p', repoPath: remote, config: { remote, keepBranches: true, provider: { kind: 'scripted', script } } });
    const first = await a.store.tasks.create({ projectId: project.id, title: 'Add a', complexity: 'easy' });
    const second = await a.store.tasks.create({ projectId: project.id, title: 'Add b', complexity: 'easy' });
    a.orchestrator.kick();
    await untilStatus(a, first.id, 'exec_review', ['needs_attention', 'done']);
    await untilStatus(a, second.id, 'exec_review', ['needs_attention', 'done']);
    expect((await daemonRequest(a, 'POST', `/api/tasks/${first.id}/approve`, { who: 'ada' })).status).toBe(200);
    await taskDone(a, first.id, budget(120_000));
    const mainAfterFirst = git(remote, 'rev-parse', 'main');

    // a's train finds main moved under the second change: a's merge check run, held at its check.
    expect((await daemonRequest(a, 'POST', `/api/tasks/${second.id}/approve`, { who: 'ada' })).status).toBe(200);
    a.orchestrator.kick();
    const running = async () => (await a.store.events.list({ taskId: second.id, type: 'run.phase', limit: 1000 })).events.some((e) => e.payload.stage === 'check:held' && e.payload.state === 'start');
    await until(a.bus, running, "a's merge check at its check", budget(120_000));

    // b comes up meanwhile, and its trains look at the project while a's run is at work.
    const b = await startTestDaemon({ database: url, name: 'b', tickMs: 100 });
    daemons.push(b);
    for (let i = 0; i < 3; i++) await b.orchestrator.merges.tick();
    expect(git(remote, 'rev-parse', 'main')).toBe(mainAfterFirst);
    expect((await b.store.runs.list({ taskId: second.id })).filter((r) => r.kind === 'merge_check').map((r) => r.owner)).toEqual(['a']);
    expect((await b.store.tasks.get(second.id)).status).toBe('merging');

    writeFileSync(join(worktreeRoot(a.config.home, project.id), `${second.id}-v1`, 'go'), '');
    const done = await taskDone(b, second.id, budget(120_000));
    const checked = reviewedCommit(done)!;
    expect((await b.store.runs.list({ taskId: second.id })).map((r) => `${r.kind}:${r.status}`)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded']);
    expect((await b.store.events.list({ taskId: second.id, type: 'merge.check' })).events.map((e) => e.payload.owner)).toEqual(['a']);
    expect(git(remote, 'rev-parse', 'main')).toBe(checked);
    expect(git(remote, 'rev-parse', `refs/heads/maestro/${second.id}-v1`)).toBe(checked);
    expect(git(remote, 'log', '--format=%H', 'main', '--', 'b.txt').split('\n').filter(Boolean)).toHaveLength(1);
    expect(await b.store.db.all('SELECT commit_sha FROM merges WHERE task_id = $1', [second.id])).toEqual([{ commit_sha: checked }]);
  });
});
