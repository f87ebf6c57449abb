/**
 * `task show` at exec_review says what the task's runs staged for the knowledge review, and the command that
 * reviews it: a person approving the change learns there is knowledge to decide apart from it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { checkRun, stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';
import { SPEC_FILE } from '../helpers/knowledge2.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { bareRemote, git } from '../helpers/repo.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

let d: TestDaemon | null = null;
afterEach(async () => {
  await d?.stop();
  d = null;
  removeTempDirs();
});

describe('maestro task show at exec_review', () => {
  it('does not count as not decided an exact duplicate of an existing entry (the seal rejects it on its own)', async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const { cli } = cliFor(d.config.home);
    const repo = gitRepo();
    mkdirSync(join(repo, '.workflow', 'specs'), { recursive: true });
    writeFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), SPEC_FILE);
    const project = await d.store.projects.create({ name: 'k', repoPath: repo, config: {} });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet people' });
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(task.id, s);
    const root = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_HOME: d.config.home } });
    const sid = sessionIdFor(task.id);
    createSession(root, sid, task.title);
    createRun(root, sid, { runId: 'run-1' });
    // Word for word an entry the project has: reconciled as an exact duplicate, still pending until the run is sealed.
    stage(root, { target: 'spec', title: 'Errors carry codes', content: 'Every error thrown to a user must carry a stable error code and say what and where.', run: 'run-1', session: sid }, process.env);
    stage(root, { target: 'spec', title: 'Greetings are short', content: 'A greeting is one line.', run: 'run-1', session: sid }, process.env);
    checkRun(createLifecycleContext({ embedder: null }), root, sid, 'run-1');
    const shown = await cli(['task', 'show', task.id, '--url', d.url]);
    expect(shown.stdout).toContain(`This task's runs staged 2 knowledge candidates (1 not decided yet), reviewed apart`);
  });

  it("names the knowledge candidates the task's runs staged, with the command to review them; nothing when there are none", async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const { cli, cliJson } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const repo = gitRepo();
    const project = await d.store.projects.create({ name: 'k', repoPath: repo, config: {} });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet people' });
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(task.id, s);

    // No session yet (no run reached the knowledge bridge): nothing said.
    const bare = await cli(['task', 'show', task.id, ...url]);
    expect([bare.code, bare.stderr]).toEqual([0, '']);
    expect(bare.stdout).not.toContain('knowledge candidate');

    const root = resolveWorkflowRoot({ workflowRoot: repo, env: { ...process.env, MAESTRO_HOME: d.config.home } });
    const sid = sessionIdFor(task.id);
    createSession(root, sid, task.title);
    // An empty session says nothing either.
    expect((await cli(['task', 'show', task.id, ...url])).stdout).not.toContain('knowledge candidate');
    stage(root, { target: 'spec', title: 'Greetings are short', content: 'A greeting is one line.', session: sid }, process.env);
    stage(root, { target: 'spec', title: 'Greetings are polite', content: 'A greeting says hello.', session: sid }, process.env);

    const command = `maestro knowledge review ${task.id} --workflow-root ${repo}`;
    const shown = await cli(['task', 'show', task.id, ...url]);
    expect([shown.code, shown.stderr]).toEqual([0, '']);
    expect(shown.stdout).toContain(`This task's runs staged 2 knowledge candidates (2 not decided yet), reviewed apart from the change (approving it promotes none): ${command}\n`);
    const json = await cliJson<{ knowledge: unknown }>(['task', 'show', task.id, ...url]);
    expect(json.body.knowledge).toEqual({ session_id: sid, candidates: 2, undecided: 2, command });

    // The command it names reviews them.
    const reviewed = await cli(command.split(' ').slice(1), undefined);
    expect(reviewed.code).toBe(0);
    expect(reviewed.stdout).toContain('"Greetings are short"');
    expect(reviewed.stdout).toContain('"Greetings are polite"');

    // Past the gate (rejected: a new version), the old version's show says nothing of it.
    await d.store.tasks.reject(task.id, 'exec_review', 'ana', 'greet in French');
    expect((await cli(['task', 'show', task.id, ...url])).stdout).not.toContain('knowledge candidate');

    // A project on a shared remote: its runs work, and its session lives, in the daemon's clone under its home.
    const remote = bareRemote(tempDir('maestro-remote-'));
    const shared = await d.store.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const there = await d.store.tasks.create({ projectId: shared.id, title: 'Greet on the remote' });
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(there.id, s);
    const clone = join(d.config.home, 'clones', shared.id);
    git(tempDir(), 'clone', '-q', remote, clone);
    const cloneRoot = resolveWorkflowRoot({ workflowRoot: clone, env: { ...process.env, MAESTRO_HOME: d.config.home } });
    createSession(cloneRoot, sessionIdFor(there.id), there.title);
    stage(cloneRoot, { target: 'spec', title: 'Greetings travel', content: 'A greeting works on every host.', session: sessionIdFor(there.id) }, process.env);
    expect((await cli(['task', 'show', there.id, ...url])).stdout).toContain(`This task's runs staged 1 knowledge candidate (1 not decided yet), reviewed apart from the change (approving it promotes none): maestro knowledge review ${there.id} --workflow-root ${clone}\n`);

    // A project whose folder is gone (moved, deleted): no session to speak of, and no error about it.
    const gone = gitRepo();
    const moved = await d.store.projects.create({ name: 'moved', repoPath: gone, config: {} });
    const far = await d.store.tasks.create({ projectId: moved.id, title: 'Greet far away' });
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(far.id, s);
    rmSync(gone, { recursive: true, force: true });
    const farShown = await cli(['task', 'show', far.id, ...url]);
    expect([farShown.code, farShown.stderr]).toEqual([0, '']);
    expect(farShown.stdout).toContain('Greet far away');
    expect(farShown.stdout).not.toContain('knowledge candidate');
  });
});
