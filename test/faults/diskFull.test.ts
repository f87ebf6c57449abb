/**
 * Disk full, on a real small tmpfs. A daemon whose disk fills stays up,
 * reports DISK_FULL on /api/health, claims no new work while it lasts, and
 * resumes by itself once space is freed, with nothing lost in the database.
 * A start on a full disk is a clear error that leaves no lock behind.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../src/daemon/health.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { readHomeToken } from '../../src/config/home.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { cleanEnv, cliJson, startCli } from '../cli/helpers.js';
import { trackResource } from '../../src/lib/resources.js';

const waitFor = (check: () => Promise<boolean>, what: string, timeoutMs = 90_000) => poll(check, what, timeoutMs);
import { mountTmpfs, requireTmpfs, type Tmpfs } from './tmpfs.js';
import { budget } from '../helpers/budget.js';

const SIMPLE = fileURLToPath(new URL('../daemon/fixtures/simple.yaml', import.meta.url));
const ASK = fileURLToPath(new URL('../daemon/fixtures/ask.yaml', import.meta.url));
const mountable = requireTmpfs('faults: disk full');

describe.skipIf(!mountable)('disk full', () => {
  let daemon: TestDaemon | null = null;
  let disk: Tmpfs | null = null;
  afterEach(async () => {
    try {
      await daemon?.stop({ graceMs: 2000 });
    } finally {
      daemon = null;
      disk?.unmount();
      disk = null;
      removeTempDirs();
    }
  });

  const health = async (d: TestDaemon) => (await daemonRequest<HealthReport>(d, 'GET', '/api/health')).body;

  it('a running daemon whose home fills up stays up, reports DISK_FULL, claims nothing, and resumes when space is freed', { timeout: budget(300_000) }, async () => {
    disk = mountTmpfs(32);
    const home = join(disk.dir, 'home');
    // The database lives on another disk here, so that its writes succeed and only the pause keeps the task unclaimed.
    const database = `sqlite:${join(tempDir(), 'maestro.db')}`;
    daemon = await startTestDaemon({ home, database, tickMs: 100 }, { logFile: join(home, 'logs', 'daemon.log'), healthProbeMs: 100, noOrchestrator: true });
    const { store, bus } = daemon;
    expect(await health(daemon)).toMatchObject({ ok: true, conditions: [] });
    const project = await store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script: SIMPLE } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy' });

    disk.fill();
    // Log lines now fail to be written (this used to end the process through an unhandled 'error').
    for (let i = 0; i < 20; i++) daemon.log.warn({ filler: 'x'.repeat(16 * 1024) }, 'a log line on a full disk');
    const full = await until(bus, async () => {
      const h = await health(daemon!);
      return h.ok ? null : h;
    }, 'DISK_FULL on /api/health');
    expect(full.conditions).toEqual([expect.objectContaining({ code: 'DISK_FULL', message: expect.stringMatching(/No space left on the disk holding/) })]);
    expect(full.conditions[0]!.path.startsWith(home)).toBe(true);
    expect(daemon.health.claimPaused).toBe(true);

    // Ticks run (the database takes writes) but claim nothing while the disk is full.
    for (let i = 0; i < 3; i++) await daemon.orchestrator.tick();
    expect(await store.tasks.get(task.id)).toMatchObject({ status: 'ready', claimedBy: null });
    // The task says what holds it back.
    expect((await daemonRequest<{ heldBack: unknown }>(daemon, 'GET', `/api/tasks/${task.id}`)).body.heldBack).toEqual(full.conditions);
    // maestro doctor reports the daemon's condition; run with another home, it says the daemon's database is not the one it checked.
    const elsewhere = tempDir();
    const doctor = await cliJson<{ ok: boolean; checks: { name: string; status: string; detail: string }[] }>(['doctor', '--url', daemon.url], cleanEnv({ MAESTRO_HOME: elsewhere, MAESTRO_TOKEN: daemon.token! }));
    expect(doctor.code).toBe(1);
    expect(doctor.body.checks).toContainEqual({ name: 'daemon health', status: 'fail', detail: expect.stringMatching(/^DISK_FULL: No space left on the disk holding/) });
    expect(doctor.body.checks).toContainEqual({ name: 'daemon database', status: 'warn', detail: `the daemon at ${daemon.url} uses ${daemon.config.database}, not sqlite:${join(elsewhere, 'maestro.db')}, which these settings name and the database check above looked at: give doctor the daemon's database (--database or MAESTRO_DATABASE) to check that one` });
    const same = await cliJson<{ checks: { name: string }[] }>(['doctor', '--url', daemon.url], cleanEnv({ MAESTRO_HOME: elsewhere, MAESTRO_DATABASE: daemon.config.database, MAESTRO_TOKEN: daemon.token! }));
    expect(same.body.checks.map((c) => c.name)).toContain('daemon health');
    expect(same.body.checks.map((c) => c.name)).not.toContain('daemon database');
    // And how that daemon runs agents (in the sandbox, the default where bwrap works; CI installs it).
    const sandboxed = daemon.config.agentSandbox !== null;
    expect(doctor.body.checks).toContainEqual({ name: 'daemon agent sandbox', status: sandboxed ? 'ok' : 'warn', detail: expect.stringContaining(sandboxed ? 'in the bwrap sandbox' : 'unsandboxed') });

    disk.free();
    await until(bus, async () => (await health(daemon!)).ok, 'health ok after freeing space');
    daemon.orchestrator.start();
    await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
      return t.status === 'exec_review';
    }, 'the task to run once space is back', 150_000);
    // The log says what was lost, once it can be written again.
    await until(bus, async () => readFileSync(join(home, 'logs', 'daemon.log'), 'utf8').includes('the disk takes writes again'), 'the recovery log line');
    expect(readFileSync(join(home, 'logs', 'daemon.log'), 'utf8')).toMatch(/\d+ log line\(s\) were lost while the log file could not be written \(ENOSPC\)/);
  });

  it('a daemon whose database disk fills answers writes with 507 DISK_FULL naming the file, stays up, and loses nothing', async () => {
    disk = mountTmpfs(16);
    const home = join(disk.dir, 'home');
    daemon = await startTestDaemon({ home }, { healthProbeMs: 100, noOrchestrator: true });
    const dbFile = join(home, 'maestro.db');
    const project = await store().projects.create({ name: 'p', repoPath: makeRepo() });
    const before = [];
    for (let i = 0; i < 5; i++) before.push((await store().tasks.create({ projectId: project.id, title: `before ${i}` })).id);

    disk.fill();
    const created: string[] = [];
    let refused: { status: number; code?: string; message?: string } | null = null;
    for (let i = 0; i < 2000 && !refused; i++) {
      const r = await daemonRequest<{ task?: { id: string }; error?: { code: string; message: string } }>(daemon, 'POST', '/api/tasks', { projectId: project.id, title: `during ${i}`, spec: 'y'.repeat(20_000) });
      if (r.status === 201) created.push(r.body.task!.id);
      else refused = { status: r.status, code: r.body.error?.code, message: r.body.error?.message };
    }
    expect(refused).toEqual({ status: 507, code: 'DISK_FULL', message: expect.stringContaining(dbFile) });
    expect((await health(daemon)).conditions.map((c) => c.code)).toContain('DISK_FULL');
    // Still up: reads answer.
    expect((await daemonRequest(daemon, 'GET', `/api/tasks?projectId=${project.id}`)).status).toBe(200);

    disk.free();
    await until(daemon.bus, async () => (await health(daemon!)).ok, 'health ok after freeing space');
    const after = await daemonRequest<{ task: { id: string } }>(daemon, 'POST', '/api/tasks', { projectId: project.id, title: 'after' });
    expect(after.status).toBe(201);
    const ids = new Set((await store().tasks.list({ projectId: project.id, limit: 10_000 })).map((t) => t.id));
    for (const id of [...before, ...created, after.body.task.id]) expect(ids.has(id)).toBe(true);
    expect(await store().db.one<{ r: string }>('PRAGMA quick_check')).toEqual({ quick_check: 'ok' });

    function store() {
      return daemon!.store;
    }
  });

  it('`maestro serve` survives its log file failing on a full disk (it used to die of an unhandled ENOSPC) and exits cleanly after', { timeout: budget(300_000) }, async () => {
    disk = mountTmpfs(16);
    const home = join(disk.dir, 'home');
    const serve = startCli(['serve', '--home', home, '--port', '0', '--no-demo'], cleanEnv({ MAESTRO_LOG_LEVEL: 'info' }));
    const untrack = trackResource('process', `maestro serve ${serve.pid}`, () => serve.kill('SIGKILL'));
    const exited = new Promise<number | null>((resolve) => serve.once('exit', (code) => { untrack(); resolve(code); }));
    try {
      let stderr = '';
      serve.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      await waitFor(async () => /daemon on http:\/\/\S+/.test(stderr) || serve.exitCode !== null, 'the daemon line', 120_000);
      const d = { url: /daemon on (http:\/\/\S+)/.exec(stderr)?.[1] ?? `(serve exited: ${stderr})`, token: readHomeToken(home) };
      disk.fill([join(home, 'logs', 'daemon.log')]);
      // The probe (every 5 s by default) finds the full disk and logs it: that log line fails to be written.
      await waitFor(async () => !(await daemonRequest<HealthReport>(d, 'GET', '/api/health')).body.ok, 'DISK_FULL from a real `maestro serve`');
      disk.free();
      await waitFor(async () => (await daemonRequest<HealthReport>(d, 'GET', '/api/health')).body.ok, 'health ok again');
      expect(serve.exitCode).toBeNull();
      serve.kill('SIGTERM');
      expect(await exited).toBe(0);
      // Without the newlines fill() appended, so that a failure shows the lines.
      const log = readFileSync(join(home, 'logs', 'daemon.log'), 'utf8').replace(/\n{2,}/g, '\n');
      // Every line is in the file or counted as lost: the full disk's warning normally fails and is counted before
      // the next line that gets through; on a loaded machine the disk can have a page for it after all (the
      // daemon's SQLite gives some back), and then it is there itself. Logging went on after: the last line is there.
      expect(log).toMatch(/log line\(s\) were lost while the log file could not be written \(ENOSPC\)|claiming new work paused: No space left/);
      expect(log).toContain('"msg":"daemon stopped"');
    } finally {
      serve.kill('SIGKILL');
      await exited;
    }
  });

  /** A task whose run asks a question (ask.yaml), waiting for the answer. */
  async function asking(d: TestDaemon) {
    const project = await d.store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script: ASK }, autoApproveAfterMs: 0 } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Ask', complexity: 'easy' });
    d.orchestrator.kick();
    await until(d.bus, async () => (await d.store.tasks.get(task.id)).status === 'awaiting_input', 'the question', 120_000);
    const [run] = await d.store.runs.list({ taskId: task.id });
    return { project, task, run: run! };
  }

  /** The answer goes through now: the run writes it, and the task is merged. */
  async function answered(d: TestDaemon, taskId: string, repo: string) {
    expect((await daemonRequest(d, 'POST', `/api/tasks/${taskId}/reply`, { message: 'Ada' })).status).toBe(202);
    await until(d.bus, async () => (await d.store.tasks.get(taskId)).status === 'done', 'the task done with its answer', 120_000);
    expect(readFileSync(join(repo, 'name.txt'), 'utf8')).toBe('Ada\n');
  }

  it('a reply or an instruction while the disk of the runs is full answers 507 and changes nothing; freed, the reply goes through', { timeout: budget(300_000) }, async () => {
    disk = mountTmpfs(32);
    const home = join(disk.dir, 'home');
    // The database on another disk: only the run's inbox meets the full disk.
    daemon = await startTestDaemon({ home, database: `sqlite:${join(tempDir(), 'maestro.db')}`, tickMs: 100 }, { healthProbeMs: 100 });
    const { store, bus } = daemon;
    const { project, task, run } = await asking(daemon);
    const inbox = join(run.runDir!, 'inbox.json');

    disk.fill();
    const reply = await daemonRequest<{ error: { code: string; message: string } }>(daemon, 'POST', `/api/tasks/${task.id}/reply`, { message: 'lost?' });
    expect(reply).toMatchObject({ status: 507, body: { error: { code: 'DISK_FULL', message: expect.stringContaining(run.runDir!) } } });
    const inject = await daemonRequest<{ error: { code: string } }>(daemon, 'POST', `/api/tasks/${task.id}/inject`, { message: 'also lost?' });
    expect(inject).toMatchObject({ status: 507, body: { error: { code: 'DISK_FULL' } } });
    expect(existsSync(inbox)).toBe(false);
    expect(readdirSync(run.runDir!).filter((n) => n.includes('inbox'))).toEqual([]);
    expect((await store.tasks.get(task.id)).status).toBe('awaiting_input');
    expect((await store.events.list({ taskId: task.id, type: 'task.inject' })).events).toEqual([]);

    disk.free();
    await until(bus, async () => (await health(daemon!)).ok, 'health ok after freeing space');
    await answered(daemon, task.id, project.repoPath);
  });

  it('a reply the database cannot record (its disk full) is not handed to the run: the task still waits for it', { timeout: budget(300_000) }, async () => {
    disk = mountTmpfs(16);
    // The database on the small disk, the runs elsewhere: the inbox can be written, the status change cannot.
    daemon = await startTestDaemon({ database: `sqlite:${join(disk.dir, 'maestro.db')}`, tickMs: 100 }, { healthProbeMs: 100 });
    const { store, bus } = daemon;
    const { project, task, run } = await asking(daemon);

    disk.fill();
    // Full for certain: writes until the database refuses one (a page it had may still take a few).
    let refused = false;
    for (let i = 0; i < 2000 && !refused; i++) refused = (await daemonRequest(daemon, 'POST', '/api/tasks', { projectId: project.id, title: `filler ${i}`, spec: 'y'.repeat(20_000) })).status === 507;
    expect(refused).toBe(true);
    const reply = await daemonRequest<{ error: { code: string } }>(daemon, 'POST', `/api/tasks/${task.id}/reply`, { message: 'lost?' });
    expect(reply).toMatchObject({ status: 507, body: { error: { code: 'DISK_FULL' } } });
    expect(existsSync(join(run.runDir!, 'inbox.json'))).toBe(false);

    disk.free();
    await until(bus, async () => (await health(daemon!)).ok, 'health ok after freeing space');
    expect((await store.tasks.get(task.id)).status).toBe('awaiting_input');
    await answered(daemon, task.id, project.repoPath);
  });

  it('a start on a full disk is a clear error and leaves no lock that blocks the next start', async () => {
    disk = mountTmpfs(8);
    const home = join(disk.dir, 'home');
    const first = await startTestDaemon({ home });
    await first.stop({ graceMs: 0 });
    disk.fill();
    await expect(startTestDaemon({ home })).rejects.toThrow(/No space left .*home/);
    expect(readdirSync(home).filter((n) => n.startsWith('daemon.lock'))).toEqual([]);
    disk.free();
    daemon = await startTestDaemon({ home });
    expect(existsSync(join(home, 'daemon.lock'))).toBe(true);
  });
});
