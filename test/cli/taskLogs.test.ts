/**
 * `maestro task logs` at the exec_review gate, after a real execute run and a real review run (the scripted
 * agent in real workers, a real repository): it says which run it shows and names the task's other runs, and
 * `--run` / `--kind` show the execute run's output, which the latest run (the review) hid (a trial).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo, waitForOutput } from './helpers.js';
import { OutboxWriter } from '../../src/executor/protocol/outbox.js';
import { expireClaims } from '../../src/store/ops/claim.js';
import { poll } from '../helpers/wait.js';

afterEach(() => removeTempDirs());

const SCRIPT = {
  steps: [
    { match: { role: 'execute', title: 'Break' }, actions: [{ text: 'Started on it, then the model went away.' }, { fail: 'model overloaded' }] },
    { match: { role: 'execute' }, actions: [{ text: 'Wrote the greeting as asked.' }, { write: { path: 'src/greet.ts', content: "export const greet = () => 'hello';\n" } }] },
    { match: { role: 'review' }, actions: [{ text: 'Looked it over.' }, { verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe('maestro task logs: which run', { timeout: budget(240_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('names the run it shows and the others, and shows the execute run with --run or --kind at exec_review', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'logs', repoPath: gitRepo(), config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Add a greeting', complexity: 'easy' });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'exec_review', 120_000);
    const [execute, review] = await d.store.runs.list({ taskId: task.id });
    expect([execute!.kind, review!.kind]).toEqual(['execute', 'review']);

    // The latest run is the review: said, and where the execute run's output is.
    const latest = await cli(['task', 'logs', task.id, ...url]);
    expect(latest.code).toBe(0);
    const first = (out: string) => out.split('\n')[0];
    const last = (out: string) => out.trimEnd().split('\n').at(-1);
    expect(first(latest.stdout)).toBe(`Run ${review!.id} of ${task.id}: review, succeeded (the latest of 2 runs).`);
    expect(latest.stdout).toContain('agent: Looked it over.');
    expect(latest.stdout).not.toContain('Wrote the greeting as asked.');
    expect(last(latest.stdout)).toBe(`Other runs of ${task.id}: execute ${execute!.id} (succeeded). Show one with: maestro task logs ${task.id} --run <runId> (or --kind execute).`);

    for (const choice of [['--run', execute!.id], ['--kind', 'execute']]) {
      const shown = await cli(['task', 'logs', task.id, ...choice, ...url]);
      expect(shown.code, choice.join(' ')).toBe(0);
      expect(first(shown.stdout)).toBe(`Run ${execute!.id} of ${task.id}: execute, succeeded.`);
      expect(shown.stdout).toContain('[agent] agent: Wrote the greeting as asked.');
      expect(shown.stdout).not.toContain('Looked it over.');
      expect(last(shown.stdout)).toBe(`Other runs of ${task.id}: review ${review!.id} (succeeded). Show one with: maestro task logs ${task.id} --run <runId> (or --kind review).`);
    }

    // Another task's run is refused, naming this task's runs; so is a kind it has none of.
    const other = await d.store.tasks.create({ projectId: project.id, title: 'Another', complexity: 'easy' });
    await d.store.tasks.transition(other.id, 'cancelled');
    const foreign = await d.store.runs.create({ taskId: other.id, kind: 'execute', model: 'haiku', traceId: 'trace-other', attempt: 1 });
    const refused = await cli(['task', 'logs', task.id, '--run', foreign.id, ...url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`maestro: Run ${foreign.id} is not one of ${task.id}'s runs; its runs: execute ${execute!.id} (succeeded), review ${review!.id} (succeeded). [UNKNOWN_RUN]\n`);
    const noPlan = await cli(['task', 'logs', task.id, '--kind', 'plan', ...url]);
    expect(noPlan.code).toBe(1);
    expect(noPlan.stderr).toContain(`${task.id} has no plan run; its runs: execute ${execute!.id} (succeeded), review ${review!.id} (succeeded).`);
    // --follow follows whatever run is current: naming one is a usage error.
    expect((await cli(['task', 'logs', task.id, '--follow', '--kind', 'execute', ...url])).code).toBe(2);
  });

  it('--follow says when the task waits at a gate for a person, and goes on through the approval to the merge', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { startCli } = cliFor(d.config.home);
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'logs', repoPath: gitRepo(), config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Add a greeting', complexity: 'easy' });
    const follower = startCli(['task', 'logs', task.id, '--follow', '--url', d.url]);
    const sink = { out: '' };
    follower.stdout!.on('data', (b: Buffer) => (sink.out += b.toString()));
    try {
      d.orchestrator.kick();
      const gate = `══ ${task.id} waits at exec_review for you: maestro task diff ${task.id}, then maestro task approve ${task.id} (or reject --reason …); still following ══`;
      await waitForOutput(follower, gate, sink);
      // The review ran before the gate was reached: its output comes first, however fast it ran (it came after the
      // gate's line when the review ended before the follower looked at the status).
      expect(sink.out.indexOf('Looked it over.')).toBeGreaterThan(-1);
      expect(sink.out.indexOf('Looked it over.')).toBeLessThan(sink.out.indexOf(gate));
      expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { who: 'ada' })).status).toBe(200);
      d.orchestrator.kick();
      const code = await new Promise<number | null>((r) => (follower.exitCode !== null ? r(follower.exitCode) : follower.on('close', r)));
      expect(code).toBe(0);
      expect(sink.out.split(gate)).toHaveLength(2); // said once
      expect(sink.out).toMatch(new RegExp(`══ ${task.id} is done ══\\n$`));
    } finally {
      follower.kill('SIGKILL');
    }
  });

  it('--follow of a task that has not started says why first: a dependency that needs a person', async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const { startCli } = cliFor(d.config.home);
    const project = await d.store.projects.create({ name: 'logs', repoPath: gitRepo(), config: {} });
    const schema = await d.store.tasks.create({ projectId: project.id, title: 'Schema' });
    await d.store.tasks.transition(schema.id, 'needs_attention');
    const api = await d.store.tasks.create({ projectId: project.id, title: 'Api', deps: [schema.id] });
    const follower = startCli(['task', 'logs', api.id, '--follow', '--url', d.url]);
    const sink = { out: '' };
    follower.stdout!.on('data', (b: Buffer) => (sink.out += b.toString()));
    try {
      await waitForOutput(follower, 'Still following. ══', sink);
      expect(sink.out).toBe(`══ ${api.id} has not started. It cannot start: it depends on ${schema.id} "Schema" (needs_attention). Retry that (maestro task retry ${schema.id}) or drop it from its deps (maestro task edit ${api.id} --no-deps). Still following. ══\n`);
    } finally {
      follower.kill('SIGKILL');
    }
  });

  it('shows what a failed agent call printed and why it failed, for each model tried', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli } = cliFor(d.config.home);
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'logs', repoPath: gitRepo(), config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Break the greeting', complexity: 'easy' });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'needs_attention', 120_000);
    const logs = await cli(['task', 'logs', task.id, '--url', d.url]);
    expect(logs.code).toBe(0);
    const [run] = await d.store.runs.list({ taskId: task.id });
    expect(logs.stdout.split('\n')[0]).toBe(`Run ${run!.id} of ${task.id}: execute, failed.`);
    // Two models tried (haiku, then haiku again: the weakest tier retries itself), each with its output and its error.
    expect(logs.stdout.split('\n').filter((l) => l.startsWith('[agent] agent: '))).toEqual(Array(2).fill('[agent] agent: Started on it, then the model went away.'));
    expect(logs.stdout.split('\n').filter((l) => l.startsWith('[agent] error: '))).toEqual(Array(2).fill('[agent] error: AGENT_FAILED: model overloaded (model haiku)'));
  });

  it('--follow says how the daemon recorded a run, not what its worker wrote: a run whose lease was lost prints as failed, with why', async () => {
    // A trial: after a kill -9, another daemon expired the claim and recorded the run failed, while the run's outbox
    // ended in the worker's result; the follow replayed it as "✓ run … finished".
    d = await startTestDaemon({}, { noOrchestrator: true });
    const { startCli } = cliFor(d.config.home);
    const project = await d.store.projects.create({ name: 'logs', repoPath: gitRepo(), config: {} });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Add a greeting', complexity: 'easy' });
    const { attempt } = await d.store.tasks.claim(task.id, 'build-1', 60_000);
    expect(await d.store.tasks.advance({ id: task.id, owner: 'build-1', attempt }, 'queued', 'executing')).toBe(true);
    const runDir = tempDir('maestro-run-');
    const run = await d.store.runs.start({ taskId: task.id, kind: 'execute', model: null, traceId: 'trace-1', attempt, owner: 'build-1', runDir });
    const outbox = new OutboxWriter(runDir, { traceId: 'trace-1', runId: run.id });
    outbox.write({ type: 'token', stage: 'agent', text: 'Wrote the greeting as asked.\n' });
    outbox.write({ type: 'result', kind: 'execute', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0, models: [], agentCalls: 1 }, data: {} });
    // The lease ran out (build-1 stopped heartbeating): the claim is expired as a running daemon's tick does.
    expect(await d.store.db.transaction((q) => expireClaims(q, { now: Date.now() + 61_000 }))).toEqual([task.id]);
    expect((await d.store.runs.get(run.id)).status).toBe('failed');

    const follower = startCli(['task', 'logs', task.id, '--follow', '--url', d.url]);
    const sink = { out: '' };
    follower.stdout!.on('data', (b: Buffer) => (sink.out += b.toString()));
    try {
      await waitForOutput(follower, 'Wrote the greeting as asked.', sink);
      await poll(() => sink.out.includes(`run ${run.id} `), `a line for run ${run.id}`, 60_000);
      const line = sink.out.split('\n').find((l) => l.includes(`run ${run.id} `));
      expect(line).toBe(`✗ run ${run.id} failed (execute): its daemon lost the lease on the task`);
      expect(sink.out).not.toContain('finished');
    } finally {
      follower.kill('SIGKILL');
    }
  });
});
