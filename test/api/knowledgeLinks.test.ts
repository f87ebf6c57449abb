/**
 * The knowledge review routes never follow a symbolic link out of a registered project's `.workflow/`: a
 * repository's content (an agent's merged change) can plant one. A session that links out is listed as
 * unreadable with the reason, never read, and nothing is written through it. Run folders are the designed
 * exception: Maestro links them to the orchestrator's run directory, and they keep working.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { SPEC_FILE } from '../helpers/knowledge2.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession } from '../../src/knowledge/lifecycle/session/store.js';

describe('knowledge review routes and links out of .workflow/', () => {
  let d: TestDaemon;
  let repo: string;
  let sessions: string;
  let outside: string;
  let projectId: string;
  beforeEach(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPEC_FILE });
    sessions = join(repo, '.workflow', 'sessions');
    outside = tempDir('maestro-outside-');
    projectId = (await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: '/nonexistent.yaml' } } })).id;
  });
  afterEach(async () => {
    await d.stop();
    removeTempDirs();
  });

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await d.app.inject({ method, url, ...(method === 'POST' ? { payload: payload ?? {} } : {}) }); // the API's front door wants a JSON body on a POST
    return { status: res.statusCode, body: res.json(), text: res.body };
  };
  const root = () => resolveWorkflowRoot({ workflowRoot: repo, env: process.env });
  /** A session with one staged candidate, as a task leaves it. */
  const stagedSession = (sid: string) => {
    createSession(root(), sid, 'teach the board');
    return stage(root(), { target: 'spec', title: 'Queues drain before shutdown', content: 'Every queue is drained before the process shuts down.', category: 'coding', session: sid, evidence: ['src/queue.ts:12'] }, process.env).candidate.candidate_id;
  };

  it('a session.json linked to a file outside is listed as unreadable, saying so, and its content is never quoted', async () => {
    const secret = join(outside, 'secret.txt');
    writeFileSync(secret, 'TOPSECRET\n');
    mkdirSync(join(sessions, 's1'), { recursive: true });
    symlinkSync(secret, join(sessions, 's1', 'session.json'));
    const file = join(sessions, 's1', 'session.json');

    const queue = await call('GET', `/api/knowledge/review?projectId=${projectId}`);
    expect(queue.status).toBe(200);
    expect(queue.text).not.toContain('TOPSECRET');
    expect(queue.body.sessions).toEqual([]);
    expect(queue.body.unreadable).toEqual([{ session_id: 's1', file, error: expect.stringContaining(`Refusing to read ${file}: ${file} is a symbolic link leading to ${secret}, outside the project's ${join(repo, '.workflow')}`) }]);
    const one = await call('GET', `/api/knowledge/review/s1?projectId=${projectId}`);
    expect(one).toMatchObject({ status: 403, body: { error: { code: 'PATH_OUTSIDE_PROJECTS' } } });
    expect(one.text).not.toContain('TOPSECRET');
  });

  it('a sessions folder linked out of .workflow/ is refused, not listed', async () => {
    mkdirSync(join(outside, 'someone-elses-folder'));
    mkdirSync(join(repo, '.workflow'), { recursive: true });
    symlinkSync(outside, sessions);
    const queue = await call('GET', `/api/knowledge/review?projectId=${projectId}`);
    expect(queue.status).toBe(403);
    expect(queue.body.error).toMatchObject({ code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(`${sessions} is a symbolic link leading to ${outside}, outside the project's`) });
    expect(queue.text).not.toContain('someone-elses-folder');
  });

  it('a session folder linked to a copy outside is listed as unreadable, and reconcile writes nothing there', async () => {
    stagedSession('task-9');
    cpSync(join(sessions, 'task-9'), join(outside, 'task-9'), { recursive: true });
    rmSync(join(sessions, 'task-9'), { recursive: true });
    symlinkSync(join(outside, 'task-9'), join(sessions, 'task-9'));
    const before = readdirSync(join(outside, 'task-9')).sort();

    const queue = await call('GET', `/api/knowledge/review?projectId=${projectId}`);
    expect(queue.body.sessions).toEqual([]);
    expect(queue.body.unreadable).toEqual([{ session_id: 'task-9', file: join(sessions, 'task-9', 'session.json'), error: expect.stringContaining(`${join(sessions, 'task-9')} is a symbolic link leading to ${join(outside, 'task-9')}, outside the project's`) }]);
    const reconcile = await call('POST', `/api/knowledge/review/task-9/reconcile?projectId=${projectId}`);
    expect(reconcile).toMatchObject({ status: 403, body: { error: { code: 'PATH_OUTSIDE_PROJECTS' } } });
    const promote = await call('POST', `/api/knowledge/review/task-9/promote?projectId=${projectId}`, { all: true });
    expect(promote.status).toBe(403);
    expect(readdirSync(join(outside, 'task-9')).sort()).toEqual(before);
    expect(existsSync(join(outside, 'task-9', 'knowledge-reconciliation.json'))).toBe(false);
  });

  it("a run folder linked anywhere but the orchestrator's run directory is refused, and reconcile writes nothing there", async () => {
    stagedSession('task-2');
    // A planted run: its folder a link to a folder outside, holding a ledger someone else wrote.
    const elsewhere = join(outside, 'someone-elses-run');
    const link = join(sessions, 'task-2', 'runs', 'run-9');
    createRun(root(), 'task-2', { runId: 'run-9', linkTo: elsewhere });
    // Written by that run's own agent (its $MAESTRO_RUN_DIR): a stage elsewhere would be refused.
    const itsAgent = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_RUN_DIR: elsewhere } });
    stage(itsAgent, { target: 'knowhow', title: 'TOPSECRET title', content: 'TOPSECRET content of a ledger outside.', run: 'run-9', session: 'task-2' }, process.env);
    const before = readdirSync(elsewhere).sort();
    const refusal = `Refusing to read ${link}: ${link} is a symbolic link leading to ${elsewhere}, outside the project's ${join(repo, '.workflow')} and the orchestrator's run folder ${join(d.config.home, 'runs')}`;

    const queue = await call('GET', `/api/knowledge/review?projectId=${projectId}`);
    expect(queue.status).toBe(200);
    expect(queue.body.sessions).toEqual([expect.objectContaining({ session_id: 'task-2', review: null, error: expect.objectContaining({ code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(refusal) }) })]);
    expect(queue.text).not.toContain('TOPSECRET');
    const reconcile = await call('POST', `/api/knowledge/review/task-2/reconcile?projectId=${projectId}`);
    expect(reconcile).toMatchObject({ status: 403, body: { error: { code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(refusal) } } });
    expect(reconcile.text).not.toContain('TOPSECRET');
    const promote = await call('POST', `/api/knowledge/review/task-2/promote?projectId=${projectId}`, { all: true });
    expect(promote.status).toBe(403);
    expect(readdirSync(elsewhere).sort()).toEqual(before);
    expect(existsSync(join(elsewhere, 'knowledge-reconciliation.json'))).toBe(false);
  });

  it("a run folder linked to the orchestrator's run directory is still reviewed and reconciled there", async () => {
    stagedSession('task-1');
    const runDir = join(d.config.home, 'runs', 'task-1', 'run-1');
    createRun(root(), 'task-1', { runId: 'run-1', linkTo: runDir });
    // Staged as the run's agent does: told its run folder, not the daemon's home.
    const agent = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_RUN_DIR: runDir } });
    stage(agent, { target: 'knowhow', title: 'Logs rotate daily', content: 'The service rotates its logs every day at midnight.', run: 'run-1', session: 'task-1', evidence: ['ops/logrotate.conf:1'] }, process.env);

    const reconcile = await call('POST', `/api/knowledge/review/task-1/reconcile?projectId=${projectId}`);
    expect(reconcile.status).toBe(200);
    expect(reconcile.body.sources.map((s: { run_id: string; receipt: string }) => [s.run_id, s.receipt])).toEqual([['session', 'fresh'], ['run-1', 'fresh']]);
    expect(JSON.parse(readFileSync(join(runDir, 'knowledge-reconciliation.json'), 'utf8'))).toMatchObject({ session_id: 'task-1', run_id: 'run-1' });
  });
});
