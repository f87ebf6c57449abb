/**
 * A task version a person replaces (a retry from the current main here; a rejection at a gate in
 * knowledge2/daemon.test.ts): its session's candidates stay in the review queue, after the current ones, and say
 * where they come from, through the API and the CLI alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { maestro, SPEC_FILE } from '../helpers/knowledge2.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';

describe('the knowledge of a replaced task version', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop();
    d = null;
    removeTempDirs();
  });

  it('after a retry from the current main the old session says so, from the store: the queue lists it last, saying why; the CLI (asking the daemon) says it too', async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPEC_FILE });
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: '/nonexistent.yaml' } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Drain queues', complexity: 'easy' });
    await d.store.tasks.transition(task.id, 'needs_attention', { from: 'ready', fields: { lastRunError: 'checks failed: lint' } });
    // Its run's knowledge, as the bridge leaves it: the task's session with a candidate; and a session of one's own.
    const root = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_HOME: d.config.home } });
    const sid = sessionIdFor(task.id);
    createSession(root, sid, task.title);
    stage(root, { target: 'spec', title: 'Queues drain first', content: 'Every queue is drained before the process stops.', session: sid }, process.env);
    createSession(root, 'zz-notes', 'notes');
    stage(root, { target: 'spec', title: 'Notes', content: 'Notes are kept short.', session: 'zz-notes' }, process.env);

    const retried = await d.app.inject({ method: 'POST', url: `/api/tasks/${task.id}/retry`, payload: { fresh: true, who: 'bo' } });
    expect(retried.statusCode).toBe(200);
    const next = retried.json().task as { id: string; version: number };
    expect(next.version).toBe(2);

    const queue = (await d.app.inject({ method: 'GET', url: `/api/knowledge/review?projectId=${project.id}` })).json().sessions as Array<{ session_id: string; review: { superseded: unknown; candidates: unknown[] } }>;
    expect(queue.map((s) => s.session_id)).toEqual(['zz-notes', sid]);
    expect(queue[1]!.review.candidates).toHaveLength(1);
    expect(queue[1]!.review.superseded).toEqual({ task_id: task.id, version: 1, cause: 'retried', gate: null, reason: 'it needed attention: checks failed: lint', who: 'bo', at: expect.any(String), superseded_by: { task_id: next.id, version: 2, session_id: sessionIdFor(next.id) } });
    // One session's review says it as well.
    expect((await d.app.inject({ method: 'GET', url: `/api/knowledge/review/${sid}?projectId=${project.id}` })).json().superseded).toMatchObject({ cause: 'retried', version: 1 });

    const cli = await maestro(['knowledge', 'review', sid, '--workflow-root', repo], { MAESTRO_HOME: d.config.home });
    expect(cli.code).toBe(0);
    expect(cli.stdout.split('\n')[1]).toBe(`  from v1 of the task, retried from the current main by bo (it needed attention: checks failed: lint); the task goes on as v2 (session ${sessionIdFor(next.id)}). What this try learned may still hold: decide each candidate.`);
  });
});
