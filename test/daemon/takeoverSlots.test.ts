/**
 * A task taken over at review goes through its taker's normal path: it is the taker's claimed work, started in the
 * tick that took it while a slot is free, ahead of any new claim, and the scheduler's decision log says who holds it
 * and that it took the task over.
 * Before, the takeover came after the tick had counted its free slots: that tick claimed a ready task into the one
 * slot, and the task taken over waited behind it, with the decision log still naming the daemon that was gone.
 *
 * Daemon a (one run at a time) executes the task and is stopped: it releases the task at review. Daemon b, started on
 * the same home under another name (so the commit is in its clone, as on a shared remote), finds the released task
 * and a ready one, with one slot. On one PostgreSQL, a daemon with no slot free takes a task over only when no other
 * live daemon has one (else the task would wait there while another sat idle).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { waitingForRun } from '../../src/api/routes/waitingForRun.js';
import { startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo, sharedRemote } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { cli, cleanEnv } from '../cli/helpers.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { hostname } from 'node:os';
import { resolveConfig } from '../../src/config/config.js';
import { settingsOf } from '../../src/daemon/daemonSettings.js';
import { beatDaemon, registerDaemon } from '../../src/store/ops/daemons.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

describe('a task taken over with one slot free', () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop({ graceMs: 0 });
    removeTempDirs();
  });

  it("starts before a new claim takes the slot, and the decision log names its taker", { timeout: budget(240_000) }, async () => {
    const home = tempDir('maestro-home-');
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    // Each task writes a file of its own: the second's execute may start from a main the first merged into already.
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - wait: 3000\n      - write: { path: "{{title}}.txt", content: "{{title}}\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    const a = await startTestDaemon({ home, name: 'a', tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 });
    daemons.push(a);
    const project = await a.store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const task = await a.store.tasks.create({ projectId: project.id, title: 'Taken over', complexity: 'easy', ownedFiles: ['Taken over.txt'] });
    a.orchestrator.kick();
    await until(a.bus, async () => (await a.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), "a's execute in its agent stage", budget(120_000));
    // a's one slot is taken: this one stays ready.
    const other = await a.store.tasks.create({ projectId: project.id, title: 'Ready', complexity: 'easy', ownedFiles: ['Ready.txt'] });
    daemons.length = 0;
    await a.stop({ graceMs: 60_000 });

    const b = await startTestDaemon({ home, name: 'b', tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 });
    daemons.push(b);
    expect(await b.store.tasks.get(task.id)).toMatchObject({ status: 'reviewing', claimedBy: 'a' });
    expect(await b.store.tasks.get(other.id)).toMatchObject({ status: 'ready', claimedBy: null });
    b.orchestrator.kick();
    await taskDone(b, task.id, budget(120_000));
    await taskDone(b, other.id, budget(120_000));

    const over = (await b.store.events.list({ taskId: task.id, type: 'task.taken_over' })).events;
    expect(over.map((e) => e.payload.owner)).toEqual(['b']);
    // b's runs in the order they started: the review of the task it took over, then the new claim's execute.
    const runs = [...(await b.store.runs.list({ taskId: task.id })), ...(await b.store.runs.list({ taskId: other.id }))].filter((r) => r.owner === 'b').sort((x, y) => x.startedAt - y.startedAt || x.id.localeCompare(y.id));
    expect(runs.map((r) => [r.taskId, r.kind])).toEqual([[task.id, 'review'], [other.id, 'execute'], [other.id, 'review']]);
    const decisions = await b.store.decisions.list({ taskId: task.id });
    expect(decisions.map((d) => d.owner)).toEqual(['b', 'a']);
    expect(decisions[0]!.competitors).toEqual([]);
    expect(decisions[0]!.score).toBe(decisions[1]!.score);
    // Marked as a takeover (the board's score section says so), the first claim as a ranking.
    expect(decisions.map((d) => d.takenOver)).toEqual([{ from: 'a', status: 'reviewing' }, null]);
  });

  // Two daemons at once: on one PostgreSQL (a home is one daemon's), the project on a shared remote.
  it.skipIf(!pgAvailable())('with no slot free it waits on its taker, and task show says for what', { timeout: budget(240_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const root = tempDir('maestro-takeover-');
    const remote = sharedRemote(root);
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute, title: Busy }\n    actions:\n      - hang: true\n  - match: { role: execute }\n    actions:\n      - wait: 3000\n      - write: { path: "a.txt", content: "a\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    const a = await startTestDaemon({ database: url, name: 'a', tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 });
    daemons.push(a);
    const project = await a.store.projects.create({ name: 'p', repoPath: remote, config: { remote, provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const task = await a.store.tasks.create({ projectId: project.id, title: 'Taken over', complexity: 'easy', ownedFiles: ['a.txt'] });
    a.orchestrator.kick();
    await until(a.bus, async () => (await a.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), "a's execute in its agent stage", budget(120_000));
    // b's one slot goes to a task of its own, whose agent never answers.
    const b = await startTestDaemon({ database: url, name: 'b', tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 });
    daemons.push(b);
    const busy = await b.store.tasks.create({ projectId: project.id, title: 'Busy', complexity: 'easy', ownedFiles: ['b.txt'] });
    b.orchestrator.kick();
    await until(b.bus, async () => (await b.store.runs.list({ taskId: busy.id, status: 'running' })).some((r) => r.owner === 'b') || null, "b's execute of the busy task", budget(120_000));
    daemons.splice(daemons.indexOf(a), 1);
    await a.stop({ graceMs: 60_000 });

    await until(b.bus, async () => ((await b.store.tasks.get(task.id)).claimedBy === 'b' ? true : null), 'the task taken over by b', budget(60_000));
    const r = await cli(['task', 'show', task.id, '--url', b.url], cleanEnv({ MAESTRO_HOME: b.config.home }));
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`It waits for a run slot on daemon b: it runs at most 1 at a time (maxConcurrentRuns), and has execute of ${busy.id} going. Its review starts there when one of them ends.`);
    expect(r.stdout).toContain('status: reviewing');
    // Asked of another daemon (not b itself), the detail reads b's settings from the registry.
    const taken = await b.store.tasks.get(task.id);
    expect(await waitingForRun(b.store, undefined, taken, await b.store.runs.list({ taskId: task.id }))).toMatchObject({ daemon: 'b', limit: 1, running: [{ taskId: busy.id, kind: 'execute' }] });
    expect((await b.store.runs.list({ taskId: task.id })).map((x) => [x.kind, x.owner])).toEqual([['execute', 'a']]);
  });

  // Three daemons on one PostgreSQL: b busy, c with a slot free. c's registry row is written as its start writes it
  // (same name, host and home) before c starts: b's tick is then asked first, by the test, and must leave the task.
  it.skipIf(!pgAvailable())('a busy daemon leaves the takeover to one with a slot free, which runs the review at once', { timeout: budget(240_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const root = tempDir('maestro-takeover-');
    const remote = sharedRemote(root);
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute, title: Busy }\n    actions:\n      - hang: true\n  - match: { role: execute }\n    actions:\n      - wait: 3000\n      - write: { path: "a.txt", content: "a\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    const one = { database: url, tickMs: 100, maxConcurrentRuns: 1, reservedConflictSlots: 0 };
    const a = await startTestDaemon({ ...one, name: 'a' });
    daemons.push(a);
    const project = await a.store.projects.create({ name: 'p', repoPath: remote, config: { remote, provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const task = await a.store.tasks.create({ projectId: project.id, title: 'Taken over', complexity: 'easy', ownedFiles: ['a.txt'] });
    a.orchestrator.kick();
    await until(a.bus, async () => (await a.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), "a's execute in its agent stage", budget(120_000));
    const b = await startTestDaemon({ ...one, name: 'b' });
    daemons.push(b);
    const busy = await b.store.tasks.create({ projectId: project.id, title: 'Busy', complexity: 'easy', ownedFiles: ['b.txt'] });
    b.orchestrator.kick();
    await until(b.bus, async () => (await b.store.runs.list({ taskId: busy.id, status: 'running' })).some((r) => r.owner === 'b') || null, "b's execute of the busy task", budget(120_000));
    const cHome = tempDir('maestro-home-');
    const cConfig = { ...resolveConfig({ home: cHome, port: 0 }, {}), ...one, name: 'c' };
    await registerDaemon(b.store.db, { name: 'c', host: hostname(), pid: process.pid, home: cHome, now: b.store.clock(), staleMs: 3 * cConfig.leaseMs, settings: settingsOf(cConfig) });
    daemons.splice(daemons.indexOf(a), 1);
    await a.stop({ graceMs: 60_000 });
    expect(await b.store.tasks.get(task.id)).toMatchObject({ status: 'reviewing', claimedBy: 'a' });

    // b has no slot free and the registry shows c with one (heard from a moment ago): b leaves the task, however often it ticks.
    await beatDaemon(b.store.db, 'c', b.store.clock());
    await b.orchestrator.tick();
    expect(await b.store.tasks.get(task.id)).toMatchObject({ status: 'reviewing', claimedBy: 'a' });
    const c = await startTestDaemon({ home: cHome, ...one, name: 'c' });
    daemons.push(c);
    c.orchestrator.kick();
    await taskDone(c, task.id, budget(120_000));
    expect((await c.store.events.list({ taskId: task.id, type: 'task.taken_over' })).events.map((e) => e.payload.owner)).toEqual(['c']);
    expect((await c.store.runs.list({ taskId: task.id })).map((x) => [x.kind, x.owner])).toEqual([['execute', 'a'], ['review', 'c']]);
    // b's own work goes on where it was.
    expect((await b.store.runs.list({ taskId: busy.id, status: 'running' })).map((r) => r.owner)).toEqual(['b']);
  });
});
