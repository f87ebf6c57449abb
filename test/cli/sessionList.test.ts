/**
 * `maestro session list` marks the sessions whose task is finished (done, cancelled, superseded), as the task
 * store says it through the daemon, so a person sees which are still live; sessions of no task, and tasks the
 * store does not know, are listed as before. Nothing about the sessions changes (no seal).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/postgres.js';
import { cleanEnv, cliFor, gitRepo } from './helpers.js';

let d: TestDaemon | null = null;
afterEach(async () => {
  await d?.stop();
  d = null;
  removeTempDirs();
});

describe('maestro session list', () => {
  it('marks the sessions of finished tasks (text and --json); says so when no daemon can tell', async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const { cli, cliJson } = cliFor(d.config.home);
    const repo = gitRepo();
    const project = await d.store.projects.create({ name: 'k', repoPath: repo, config: {} });
    const make = (title: string) => d!.store.tasks.create({ projectId: project.id, title });
    const [done, cancelled, rejected, live] = [await make('Done one'), await make('Cancelled one'), await make('Rejected one'), await make('Live one')];
    for (const s of ['queued', 'executing', 'reviewing', 'merging', 'done'] as const) await d.store.tasks.transition(done.id, s);
    await d.store.tasks.cancel(cancelled.id, { reason: 'not needed' });
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(rejected.id, s);
    const { next } = await d.store.tasks.reject(rejected.id, 'exec_review', 'ana', 'greet in French');

    const root = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_HOME: d.config.home } });
    const unknown = 'task-t-0000000000000000';
    for (const t of [done, cancelled, rejected, live, next]) createSession(root, sessionIdFor(t.id), t.title);
    createSession(root, unknown, 'A task of another database');
    createSession(root, 'notes', 'My notes');

    const listed = await cli(['session', 'list', '--workflow-root', repo]);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    const lines = new Set(listed.stdout.trimEnd().split('\n'));
    expect(lines).toEqual(new Set([
      `${sessionIdFor(done.id)}  open  (task done)  Done one`,
      `${sessionIdFor(cancelled.id)}  open  (task cancelled)  Cancelled one`,
      `${sessionIdFor(rejected.id)}  open  (task superseded)  Rejected one`,
      `${sessionIdFor(live.id)}  open  Live one`,
      `${sessionIdFor(next.id)}  open  Rejected one`,
      `${unknown}  open  A task of another database`,
      'notes  open  My notes',
    ]));

    const json = await cliJson<{ sessions: Array<{ session_id: string; status: string; task: unknown }> }>(['session', 'list', '--workflow-root', repo]);
    const task = Object.fromEntries(json.body.sessions.map((s) => [s.session_id, s.task]));
    expect(task).toEqual({
      [sessionIdFor(done.id)]: { id: done.id, status: 'done', finished: true },
      [sessionIdFor(cancelled.id)]: { id: cancelled.id, status: 'cancelled', finished: true },
      [sessionIdFor(rejected.id)]: { id: rejected.id, status: 'superseded', finished: true },
      [sessionIdFor(live.id)]: { id: live.id, status: 'ready', finished: false },
      [sessionIdFor(next.id)]: { id: next.id, status: 'ready', finished: false },
      [unknown]: null,
      notes: null,
    });
    // Only a mark: every session is as it was (open, not sealed).
    expect(json.body.sessions.every((s) => s.status === 'open')).toBe(true);

    // No daemon to ask: listed without marks, and said.
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const alone = await cli(['session', 'list', '--workflow-root', repo], cleanEnv({ MAESTRO_URL: nobody }));
    expect(alone.code).toBe(0);
    expect(alone.stdout).not.toContain('(task ');
    expect(alone.stdout).toContain(`${sessionIdFor(done.id)}  open  Done one`);
    expect(alone.stderr).toContain(`maestro: which task sessions belong to a finished task is not known here; the daemon did not answer: No Maestro daemon answers at ${nobody}`);
  });
});
