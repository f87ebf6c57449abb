/**
 * A replaced task version's knowledge, across daemons on one PostgreSQL. The project is on a shared remote, so
 * each daemon works in its own clone and a task's knowledge session lives only on the host that ran it (here B's).
 * A person rejects the task at its gate on daemon A. B's review queue, its one-session review and B's CLI still
 * say where the session's candidates come from (which version, the gate, the reason, who, what replaced it): the
 * store says it, not a record the rejecting daemon would write into a session folder it does not have.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { maestro, SPEC_FILE } from '../helpers/knowledge2.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { bareRemote } from '../helpers/repo.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

describe.skipIf(!pgAvailable())('a rejected version\'s knowledge, seen from another daemon', () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0).reverse()) await d.stop();
    removeTempDirs();
  });

  it('rejected on daemon A, the session on daemon B: B\'s review (queue, session, CLI) says where its candidates come from', async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const a = await startTestDaemon({ name: 'host-a', database: url }, { noOrchestrator: true });
    daemons.push(a);
    const b = await startTestDaemon({ name: 'host-b', database: url }, { noOrchestrator: true });
    daemons.push(b);
    const remote = bareRemote(tempDir('maestro-remote-'), { 'README.md': '# shared\n', '.workflow/specs/coding-conventions.md': SPEC_FILE });
    const project = await a.store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: '/nonexistent.yaml' } } });
    const task = await a.store.tasks.create({ projectId: project.id, title: 'Greet people', complexity: 'easy' });
    for (const st of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await b.store.tasks.transition(task.id, st);

    // B ran it: the task's session, with a candidate, is in B's clone only.
    const cloneB = join(b.config.home, 'clones', project.id);
    mkdirSync(join(b.config.home, 'clones'), { recursive: true });
    execFileSync('git', ['clone', '-q', remote, cloneB]);
    const rootB = resolveWorkflowRoot({ workflowRoot: cloneB, env: { ...process.env, MAESTRO_HOME: b.config.home } });
    const sid = sessionIdFor(task.id);
    createSession(rootB, sid, task.title);
    stage(rootB, { target: 'spec', title: 'Greetings are short', content: 'A greeting is one line.', session: sid }, process.env);

    const rejected = await daemonRequest<{ next: { id: string; version: number } }>(a, 'POST', `/api/tasks/${task.id}/reject`, { gate: 'exec_review', who: 'ana', reason: 'greet in French' });
    expect(rejected.status).toBe(200);
    const next = rejected.body.next;
    // A has no clone of the project, so no folder of the session to write anything into.
    expect(existsSync(join(a.config.home, 'clones', project.id))).toBe(false);

    const expected = { task_id: task.id, version: 1, cause: 'rejected', gate: 'exec_review', reason: 'greet in French', who: 'ana', at: expect.any(String), superseded_by: { task_id: next.id, version: 2, session_id: sessionIdFor(next.id) } };
    const queue = await daemonRequest<{ sessions: Array<{ session_id: string; review: { superseded: unknown; candidates: unknown[] } }> }>(b, 'GET', `/api/knowledge/review?projectId=${project.id}`);
    expect(queue.status).toBe(200);
    expect(queue.body.sessions.map((s) => s.session_id)).toEqual([sid]);
    expect(queue.body.sessions[0]!.review.candidates).toHaveLength(1);
    expect(queue.body.sessions[0]!.review.superseded).toEqual(expected);
    expect((await daemonRequest<{ superseded: unknown }>(b, 'GET', `/api/knowledge/review/${sid}?projectId=${project.id}`)).body.superseded).toEqual(expected);

    // B's CLI, on B's clone, asks B's daemon.
    const cli = await maestro(['knowledge', 'review', task.id, '--workflow-root', cloneB], { MAESTRO_HOME: b.config.home });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout.split('\n')[1]).toBe(`  from v1 of the task, rejected at execution review by ana: greet in French; the task goes on as v2 (session ${sessionIdFor(next.id)}). What this try learned may still hold: decide each candidate.`);
  });
});
