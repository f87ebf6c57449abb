/**
 * A daemon whose own lease on a task ran out while it was cut off from the database (here: the lease set past due by
 * hand, as a tick stuck in a query for longer than a lease leaves it) renews its claim at its next expiry: the same
 * attempt, the same review run, nothing taken over. Before, its expiry took its own task over at reviewing (attempt
 * + 1, its review run failed, a second review paid for) or sent it to ready mid-execute. With its worker gone too, the
 * run resumes from its last finished stage, as after a restart. The renewal is said (a task.renewed event on the run's
 * trace), where before it was silent.
 *
 * The lease is ten minutes, so the daemon's own renewal (a quarter of a lease apart) does not come first.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import type { Run } from '../../src/core/types.js';

const LONG_LEASE_MS = 600_000;

describe("a daemon's own lease that ran out", () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop({ graceMs: 0 });
    removeTempDirs();
  });

  /** A daemon with a task whose review is under way (its agent waits `reviewMs`), and that review run. */
  async function reviewing(reviewMs: number) {
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, `steps:\n  - match: { role: execute }\n    actions:\n      - write: { path: "a.txt", content: "a\\n" }\n  - match: { role: review }\n    actions:\n      - wait: ${reviewMs}\n      - verdict: { verdict: approve, findings: [] }\n`);
    const d = await startTestDaemon({ tickMs: 100, leaseMs: LONG_LEASE_MS });
    daemons.push(d);
    const project = await d.store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Cut off', complexity: 'easy', ownedFiles: ['a.txt'] });
    d.orchestrator.kick();
    const review = await until(d.bus, async () => {
      const run = (await d.store.runs.list({ taskId: task.id })).find((r) => r.kind === 'review' && r.status === 'running' && r.workerPid !== null);
      if (!run) return null;
      const phases = (await d.store.events.list({ taskId: task.id, type: 'run.phase' })).events;
      return phases.some((e) => e.runId === run.id && String(e.payload.stage).startsWith('review:') && e.payload.state === 'start') ? run : null;
    }, 'the review in its agent stage', budget(60_000));
    const held = await d.store.tasks.get(task.id);
    expect(held).toMatchObject({ status: 'reviewing', claimedBy: d.orchestrator.owner });
    return { d, task: held, review, script };
  }

  /** Its lease past due, as after a minute and more with no answer from the database. */
  async function leaseRunsOut(d: TestDaemon, taskId: string): Promise<void> {
    expect(await d.store.db.run(`UPDATE tasks SET lease_expires_at = $1 WHERE id = $2`, [d.store.clock() - 1, taskId])).toBe(1);
    d.orchestrator.kick();
  }

  const runsOf = async (d: TestDaemon, taskId: string) => (await d.store.runs.list({ taskId })).map((r: Run) => [r.kind, r.status, r.id]);

  it('with its run alive: renewed, the same attempt and review run, nothing taken over', { timeout: budget(180_000) }, async () => {
    const { d, task, review } = await reviewing(6000);
    await leaseRunsOut(d, task.id);
    await until(d.bus, async () => ((await d.store.tasks.get(task.id)).leaseExpiresAt! > d.store.clock() ? true : null), 'the lease renewed', budget(60_000));
    const done = await taskDone(d, task.id, budget(120_000));
    expect(done.attempt).toBe(task.attempt);
    const runs = await runsOf(d, task.id);
    expect(runs.map(([kind, status]) => [kind, status])).toEqual([['execute', 'succeeded'], ['review', 'succeeded']]);
    expect(runs[1]![2]).toBe(review.id);
    expect((await d.store.events.list({ taskId: task.id, type: 'task.taken_over' })).events).toHaveLength(0);
    // Said once, on the review run's trace: the board's trace of that run (GET /api/traces/:traceId) lists it.
    const renewed = (await d.store.events.list({ taskId: task.id, type: 'task.renewed' })).events;
    expect(renewed.map((e) => [e.runId, e.payload.owner, e.payload.status, e.payload.attempt])).toEqual([[review.id, d.orchestrator.owner, 'reviewing', task.attempt]]);
    const trace = await daemonRequest(d, 'GET', `/api/traces/${review.traceId}`);
    expect(trace.status).toBe(200);
    const chain = (trace.body as { chain: { run: { id: string }; events: { type: string }[] }[] }).chain;
    expect(chain.find((c) => c.run.id === review.id)!.events.map((e) => e.type)).toContain('task.renewed');
  });

  it('with its worker gone as well: renewed, and the same review run resumes', { timeout: budget(180_000) }, async () => {
    const { d, task, review, script } = await reviewing(600_000);
    // The next review (the resumed run's agent) answers at once.
    writeFileSync(script, 'steps:\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    await leaseRunsOut(d, task.id);
    process.kill(-review.workerPid!, 'SIGKILL');
    const done = await taskDone(d, task.id, budget(120_000));
    expect(done.attempt).toBe(task.attempt);
    const runs = await runsOf(d, task.id);
    expect(runs.map(([kind, status]) => [kind, status])).toEqual([['execute', 'succeeded'], ['review', 'succeeded']]);
    expect(runs[1]![2]).toBe(review.id);
    expect((await d.store.events.list({ taskId: task.id, type: 'run.resumed' })).events.length).toBeGreaterThan(0);
    expect((await d.store.events.list({ taskId: task.id, type: 'task.taken_over' })).events).toHaveLength(0);
  });
});
