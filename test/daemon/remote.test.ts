/**
 * A project on a shared remote that does not answer: the board's health report names the remote, the log
 * says so once (not every tick), none of the project's tasks is claimed or sent to a person, and the work
 * goes on by itself once the remote answers again, whether it never answered (no clone yet) or stopped
 * answering after the clone (a task already claimed waits with its claim). A remote that falls silent under a
 * run's start or push holds that run, not the daemon's other projects. And a daemon that may claim nothing (a
 * full disk) makes no clone.
 */
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskStatus } from '../../src/core/types.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git, makeRepo } from '../helpers/repo.js';
import { silentServer } from '../helpers/silentServer.js';
import { poll, until } from '../helpers/wait.js';
import { cliFor } from '../cli/helpers.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/plan-one.yaml', import.meta.url));
/** The agent asks first: its run ends (and pushes its branch) only once the test has replied. */
const ASKS_FIRST = `steps:
  - match: { role: execute }
    actions:
      - ask: "Ready?"
      - write: { path: "out/{{title}}.txt", content: "{{reply}}\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;
const RETRY_MS = 200;

interface Health {
  ok: boolean;
  conditions: { code: string; path: string; message: string }[];
}

async function health(d: TestDaemon): Promise<Health> {
  return (await d.app.inject({ method: 'GET', url: '/api/health' })).json() as Health;
}

const unreachable = (d: TestDaemon) => d.logs.filter((l) => l.includes('cannot be reached'));

async function ticks(d: TestDaemon, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await d.orchestrator.idle();
    d.orchestrator.kick();
  }
  await d.orchestrator.idle();
}

/** Ticks for at least `n` retry windows (RETRY_MS each), so the remote is tried again several times meanwhile. */
async function ticksOver(d: TestDaemon, n: number): Promise<void> {
  const since = Date.now();
  do await ticks(d, 5);
  while (Date.now() - since < n * RETRY_MS);
}

async function statusesOf(d: TestDaemon, taskId: string): Promise<TaskStatus[]> {
  const events = (await d.store.events.list({ taskId, type: 'task.status' })).events;
  return events.map((e) => (e.payload as { to: TaskStatus }).to);
}

describe('a shared remote that does not answer', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('before the first clone: nothing is claimed, the health report and the log say why once, and the work starts when it answers', async () => {
    const root = tempDir('maestro-remote-');
    const remote = join(root, 'remote.git'); // made later
    d = await startTestDaemon({ tickMs: 100 }, { remoteRetryMs: RETRY_MS });
    const { store, bus } = d;
    const p = await store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: SCRIPT }, autoApproveAfterMs: 0 } });
    const t = await store.tasks.create({ projectId: p.id, title: 'Waits for its remote', complexity: 'medium' });
    d.orchestrator.kick();
    const report = await poll(async () => {
      const h = await health(d!);
      return h.conditions.length ? h : null;
    }, 'the unreachable remote in GET /api/health', 60_000);
    expect(report).toMatchObject({ ok: false, conditions: [expect.objectContaining({ code: 'REMOTE_UNREACHABLE', path: remote, message: expect.stringContaining(`The shared remote ${remote} of project web cannot be reached`) })] });
    // The task and `maestro status` say what holds it back, not only the health report and doctor.
    const heldBack = async (id: string) => ((await d!.app.inject({ method: 'GET', url: `/api/tasks/${id}` })).json() as { heldBack: Health['conditions'] }).heldBack;
    expect(await heldBack(t.id)).toEqual(report.conditions);
    const { cli } = cliFor(d.config.home);
    expect((await cli(['task', 'show', t.id, '--url', d.url])).stdout).toMatch(new RegExp(`^This daemon holds it back: The shared remote ${remote} of project web cannot be reached: .* No task of the project is claimed until it answers`, 'm'));
    const status = await cli(['status', '--url', d.url]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Daemon running at ${d.url}\n  REMOTE_UNREACHABLE: The shared remote ${remote} of project web cannot be reached`);
    const other = await store.projects.create({ name: 'local', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script: SCRIPT } } });
    const elsewhere = await store.tasks.create({ projectId: other.id, title: 'Another project', complexity: 'medium' });
    expect(await heldBack(elsewhere.id)).toEqual([]);
    // Ticks over three retry windows, the remote tried again in each: said once, and the task untouched.
    await ticksOver(d, 3);
    expect(unreachable(d)).toHaveLength(1);
    expect(await store.tasks.get(t.id)).toMatchObject({ status: 'ready', claimedBy: null });
    expect(await store.runs.list({ taskId: t.id })).toEqual([]);
    expect(existsSync(join(d.config.home, 'clones', p.id))).toBe(false);

    bareRemote(root);
    await until(bus, async () => (await store.tasks.get(t.id)).status === 'done', 'the task done once the remote answers', 120_000);
    expect(await health(d)).toMatchObject({ ok: true, conditions: [] });
    expect(await heldBack(t.id)).toEqual([]);
    expect(d.logs.some((l) => l.includes(`the shared remote ${remote} answers again`))).toBe(true);
    expect(await statusesOf(d, t.id)).not.toContain('needs_attention');
  });

  it('after the clone: a claimed task waits with its claim (no person is asked), and runs once the remote is back', async () => {
    const remote = bareRemote(tempDir('maestro-remote-'));
    d = await startTestDaemon({ tickMs: 100 }, { remoteRetryMs: RETRY_MS });
    const { store, bus } = d;
    const p = await store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: SCRIPT }, autoApproveAfterMs: 0 } });
    d.orchestrator.kick();
    // The clone is made in the background before any task needs it.
    await poll(() => existsSync(join(d!.config.home, 'clones', p.id, '.git')), 'the clone', 60_000);
    renameSync(remote, `${remote}.away`);
    const t = await store.tasks.create({ projectId: p.id, title: 'Claimed while the remote is away', complexity: 'medium' });
    d.orchestrator.kick();
    await poll(async () => (await health(d!)).conditions.some((c) => c.code === 'REMOTE_UNREACHABLE' && c.path === remote), 'the unreachable remote in GET /api/health', 60_000);
    await ticksOver(d, 3);
    expect(unreachable(d)).toHaveLength(1);
    const waiting = await store.tasks.get(t.id);
    expect(waiting.claimedBy).toBe(d.orchestrator.owner);
    expect(waiting.status).not.toBe('needs_attention');
    expect(await store.runs.list({ taskId: t.id })).toEqual([]);
    // The task says why it waits (once, however many ticks), for the boards of daemons that can reach the remote.
    const why = (await store.events.list({ taskId: t.id, type: 'run.waiting' })).events.map((e) => e.payload);
    expect(why).toEqual([{ kind: expect.any(String), owner: d.orchestrator.owner, reason: expect.stringContaining(`The shared remote ${remote} of project web cannot be reached`) }]);
    const detail = (await d.app.inject({ method: 'GET', url: `/api/tasks/${t.id}` })).json() as { heldBack: Health['conditions'] };
    expect(detail.heldBack).toEqual([expect.objectContaining({ code: 'REMOTE_UNREACHABLE', path: remote, projectId: p.id })]);

    renameSync(`${remote}.away`, remote);
    await until(bus, async () => (await store.tasks.get(t.id)).status === 'done', 'the task done once the remote is back', 120_000);
    expect(await health(d)).toMatchObject({ ok: true, conditions: [] });
    expect(await statusesOf(d, t.id)).not.toContain('needs_attention');
  });

  it('a remote that takes the connection and never answers is the same condition once git has said nothing for gitStallMs', async () => {
    const silent = await silentServer();
    try {
      const remote = `http://127.0.0.1:${silent.port}/web.git`;
      d = await startTestDaemon({ tickMs: 100 }, { remoteRetryMs: RETRY_MS, gitStallMs: 500 });
      const p = await d.store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: SCRIPT } } });
      const t = await d.store.tasks.create({ projectId: p.id, title: 'Waits for a silent remote', complexity: 'medium' });
      d.orchestrator.kick();
      const condition = await poll(async () => (await health(d!)).conditions.find((c) => c.code === 'REMOTE_UNREACHABLE') ?? null, 'the silent remote in GET /api/health', 60_000);
      expect(condition).toMatchObject({ path: remote, message: expect.stringContaining('no answer from the remote: nothing from it for 0.5 s, stopped') });
      expect(await d.store.tasks.get(t.id)).toMatchObject({ status: 'ready', claimedBy: null });
      await d.stop({ graceMs: 2000 });
      d = null;
      await poll(() => silent.open() === 0, 'no connection to the silent remote left once the daemon stopped', 30_000);
    } finally {
      await silent.close();
    }
  });

  it("a remote that falls silent under a run's start holds that run, not the daemon: another project's task runs to done meanwhile", async () => {
    const silent = await silentServer();
    try {
      const remote = bareRemote(tempDir('maestro-remote-'));
      // The fetch of the run's start is stopped only after two minutes of silence.
      d = await startTestDaemon({ tickMs: 100 }, { remoteRetryMs: RETRY_MS, gitStallMs: 120_000 });
      const { store, bus } = d;
      const provider = { kind: 'scripted', script: SCRIPT };
      const shared = await store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider, autoApproveAfterMs: 0 } });
      d.orchestrator.kick();
      const clone = join(d.config.home, 'clones', shared.id);
      await poll(() => existsSync(join(clone, '.git')), 'the clone', 60_000);
      git(clone, 'remote', 'set-url', 'origin', `http://127.0.0.1:${silent.port}/web.git`);
      const stalled = await store.tasks.create({ projectId: shared.id, title: 'Started while its remote falls silent', complexity: 'medium' });
      await poll(() => silent.open() > 0, "the run's fetch, waiting for the silent remote", 60_000);

      const local = await store.projects.create({ name: 'api', repoPath: makeRepo(), config: { provider, autoApproveAfterMs: 0 } });
      const other = await store.tasks.create({ projectId: local.id, title: 'Runs meanwhile', complexity: 'medium' });
      await until(bus, async () => (await store.tasks.get(other.id)).status === 'done', "the other project's task done", 120_000);
      expect(silent.open()).toBeGreaterThan(0); // the fetch still waits
      expect(await store.runs.list({ taskId: stalled.id })).toEqual([]);
    } finally {
      await silent.close(); // the fetch fails at once: the daemon stops without waiting it out
    }
  });

  it("a remote that falls silent under a run's push holds that run's end, not the daemon: another project's task runs to done meanwhile", async () => {
    const silent = await silentServer();
    try {
      const remote = bareRemote(tempDir('maestro-remote-'));
      const script = join(tempDir('maestro-ask-'), 'ask.yaml');
      writeFileSync(script, ASKS_FIRST);
      d = await startTestDaemon({ tickMs: 100 }, { remoteRetryMs: RETRY_MS, gitStallMs: 120_000 });
      const { store, bus } = d;
      const provider = { kind: 'scripted', script };
      const shared = await store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider, autoApproveAfterMs: 0 } });
      const pushing = await store.tasks.create({ projectId: shared.id, title: 'pushing', complexity: 'easy', ownedFiles: ['out/pushing.txt'] });
      await until(bus, async () => (await store.tasks.get(pushing.id)).status === 'awaiting_input', 'the question');
      git(join(d.config.home, 'clones', shared.id), 'remote', 'set-url', 'origin', `http://127.0.0.1:${silent.port}/web.git`);
      const reply = await d.app.inject({ method: 'POST', url: `/api/tasks/${pushing.id}/reply`, payload: { message: 'yes', who: 'ann' } });
      expect(reply.statusCode).toBeLessThan(300);
      await poll(() => silent.open() > 0, "the run's push, waiting for the silent remote", 60_000);

      const local = await store.projects.create({ name: 'api', repoPath: makeRepo(), config: { provider, autoApproveAfterMs: 0 } });
      const other = await store.tasks.create({ projectId: local.id, title: 'other', complexity: 'easy', ownedFiles: ['out/other.txt'] });
      // Its agent is asked too: the reply is the test's, once asked.
      await until(bus, async () => (await store.tasks.get(other.id)).status === 'awaiting_input', "the other task's question", 120_000);
      await d.app.inject({ method: 'POST', url: `/api/tasks/${other.id}/reply`, payload: { message: 'yes', who: 'ann' } });
      await until(bus, async () => (await store.tasks.get(other.id)).status === 'done', "the other project's task done", 120_000);
      expect(silent.open()).toBeGreaterThan(0); // the push still waits
      expect((await store.tasks.get(pushing.id)).status).toBe('executing');
    } finally {
      await silent.close(); // the push fails at once: the daemon stops without waiting it out
    }
  });

  it('a daemon that may not claim (a full disk) makes no clone; once the disk takes writes it does', async () => {
    const remote = bareRemote(tempDir('maestro-remote-'));
    d = await startTestDaemon({ tickMs: 100 }, { remoteRetryMs: RETRY_MS, healthProbeMs: 3_600_000 });
    expect(d.health.notice(Object.assign(new Error('no space left on device'), { code: 'ENOSPC', path: d.config.home }))).toBe(true);
    const p = await d.store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: SCRIPT } } });
    await ticks(d, 20);
    expect(existsSync(join(d.config.home, 'clones'))).toBe(false);
    d.health.probe();
    await poll(() => existsSync(join(d!.config.home, 'clones', p.id, '.git')), 'the clone once claiming resumes', 60_000);
  });
});
