/**
 * The reviewer's cockpit end to end (issue 15): a real daemon, the scripted
 * agent in real workers, a real check. At exec_review the API shows the diff,
 * the check result and the reviewers' findings with file and line; a reject
 * with two line comments makes version 2, whose execute prompt must contain
 * both (the script only answers a prompt that does); `task logs --follow` on
 * version 1's id follows into version 2 and ends when it is merged; the merged
 * version's worktree and branch are gone and its diff is still shown.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { cliFor, waitForOutput } from '../cli/helpers.js';
import { budget } from '../helpers/budget.js';

const SCRIPT = `
steps:
  - match: { role: execute, prompt: "/src/greet.ts:1 — say hello to the world[\\\\s\\\\S]*README.md:2 — mention greet here too/" }
    actions:
      - write: { path: src/greet.ts, content: "export const greet = () => 'hello, world';\\n" }
      - append: { path: README.md, content: "See greet().\\n" }
  - match: { role: execute, title: "greeting" }
    times: 1
    actions:
      - text: "Adding the greeting."
      - write: { path: src/greet.ts, content: "export const greet = () => 'hello';\\n" }
      - append: { path: README.md, content: "Greets.\\n" }
  - match: { role: review:code }
    times: 1
    actions:
      - text: "Small and correct; one remark."
      - verdict: { verdict: approve, findings: [{ severity: low, file: src/greet.ts, line: 1, message: "take the name as a parameter" }] }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

describe("reviewer's cockpit", () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('shows diff, checks and findings at exec_review; reject comments reach version 2; follow spans the chain; merge cleans up', async () => {
    const repo = makeRepo({ 'README.md': '# test\n', '.maestro/config.json': JSON.stringify({ checks: { lint: 'test -f src/greet.ts && echo lint-ok' } }) });
    const dir = tempDir('maestro-cockpit-');
    const script = join(dir, 'script.yaml');
    writeFileSync(script, SCRIPT);
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const { store, bus } = d;
    const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
      const res = await d.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: JSON.parse(res.body) };
    };
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script, callLog: join(dir, 'calls.ndjson') } } });
    const v1 = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy' });
    d.orchestrator.kick();
    const atGate = (id: string) => until(bus, async () => {
      const t = await store.tasks.get(id);
      if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
      return t.status === 'exec_review' ? t : null;
    }, `${id} at exec_review`, 180_000);
    await atGate(v1.id);

    const diff = (await call('GET', `/api/tasks/${v1.id}/diff`)).body;
    expect(diff.files.map((f: { path: string; status: string }) => `${f.status} ${f.path}`)).toEqual(['modified README.md', 'added src/greet.ts']);
    const [execute] = (await store.runs.list({ taskId: v1.id })).filter((r) => r.kind === 'execute');
    const checks = (await call('GET', `/api/tasks/${v1.id}/checks`)).body.checks;
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ name: 'lint', command: 'test -f src/greet.ts && echo lint-ok', status: 'passed', exitCode: 0, runId: execute!.id });
    expect(checks[0].outputTail).toContain('lint-ok');
    expect(typeof checks[0].durationMs).toBe('number');
    const review = (await call('GET', `/api/tasks/${v1.id}/findings`)).body;
    expect(review.verdicts.map((v: { reviewer: string; verdict: string }) => `${v.reviewer} ${v.verdict}`).sort()).toEqual(['code approve', 'security approve']);
    expect(review.verdicts.find((v: { reviewer: string }) => v.reviewer === 'code').summary).toContain('Small and correct; one remark.');
    expect(review.findings).toEqual([expect.objectContaining({ reviewer: 'code', severity: 'low', file: 'src/greet.ts', line: 1, message: 'take the name as a parameter' })]);

    // The same evidence in `maestro task show`.
    const shown = await new Promise<string>((resolve, reject) => {
      const child = cliFor(d.config.home).startCli(['task', 'show', v1.id, '--url', d.url]);
      let text = '';
      child.stdout!.on('data', (b: Buffer) => (text += b.toString()));
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    expect(shown).toMatch(/✓ lint passed \d/);
    expect(shown).toContain('$ test -f src/greet.ts && echo lint-ok');
    expect(shown).toContain('code: approve — Small and correct; one remark.');
    expect(shown).toContain('[low, code] src/greet.ts:1: take the name as a parameter');

    // Follow version 1 from the CLI, then reject it: the follower must go on into version 2.
    const follower = cliFor(d.config.home).startCli(['task', 'logs', v1.id, '--follow', '--url', d.url]);
    const out = { text: '' };
    follower.stdout!.on('data', (b: Buffer) => (out.text += b.toString()));
    const followerDone = new Promise<number | null>((resolve) => follower.on('close', resolve));
    await waitForOutput(follower, 'finished (review)', { get out() { return out.text; } });

    const rejected = await call('POST', `/api/tasks/${v1.id}/reject`, {
      reason: 'greet the world',
      comments: [{ file: 'src/greet.ts', line: 1, text: 'say hello to the world' }, { file: 'README.md', line: 2, text: 'mention greet here too' }],
    });
    expect(rejected.status).toBe(200);
    const v2 = rejected.body.next;
    d.orchestrator.kick();
    await atGate(v2.id);
    // Only a prompt holding both comments gets this answer from the script.
    expect(git(repo, 'show', `maestro/${v2.id}-v2:src/greet.ts`)).toBe("export const greet = () => 'hello, world';");

    const approved = await call('POST', `/api/tasks/${v1.id}/approve`, {});
    expect(approved.status).toBe(409); // v1 is superseded: the API acts on the id it is given
    expect((await call('POST', `/api/tasks/${v2.id}/approve`, {})).body.task.status).toBe('merging');
    d.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(v2.id)).status === 'done', 'v2 done', 180_000);
    expect(readFileSync(join(repo, 'src/greet.ts'), 'utf8')).toBe("export const greet = () => 'hello, world';\n");

    expect(await followerDone).toBe(0);
    expect(out.text).toContain(`following version 2 (${v2.id})`);

    // Housekeeping: the merged version's worktree and branch are gone; its change is still shown.
    await until(bus, async () => (await store.events.list({ taskId: v2.id, type: 'git.cleanup' })).events.length > 0, 'cleanup event');
    expect(existsSync(join(d.config.home, 'worktrees', project.id, `${v2.id}-v2`))).toBe(false);
    expect(git(repo, 'branch', '--list', `maestro/${v2.id}-v2`)).toBe('');
    const merged = (await call('GET', `/api/tasks/${v2.id}/diff`)).body;
    expect(merged.files.map((f: { path: string }) => f.path)).toEqual(['README.md', 'src/greet.ts']);
    expect(merged.files[1].hunks[0].lines).toEqual([{ kind: 'add', text: "export const greet = () => 'hello, world';", oldLine: null, newLine: 1 }]);
    // The rejected version keeps its branch (nothing merged it) and its diff.
    expect((await call('GET', `/api/tasks/${v2.id}/diff?version=1`)).body.files).toHaveLength(2);
  }, budget(400_000));

  it('a failing check shows as failed with its exit code and the end of its output; later checks as skipped', async () => {
    const repo = makeRepo({ 'README.md': '# test\n', '.maestro/config.json': JSON.stringify({ checks: { build: 'echo building; echo broken-output >&2; exit 3', test: 'echo never' } }) });
    const dir = tempDir('maestro-cockpit-');
    const script = join(dir, 'script.yaml');
    writeFileSync(script, SCRIPT);
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy' });
    d.orchestrator.kick();
    await until(d.bus, async () => (await d.store.runs.list({ taskId: task.id })).some((r) => r.kind === 'execute' && r.status === 'failed'), 'a failed execute run', 180_000);
    await d.store.tasks.transition(task.id, 'cancelled');
    const res = await d.app.inject({ method: 'GET', url: `/api/tasks/${task.id}/checks` });
    const { checks } = JSON.parse(res.body);
    expect(checks[0]).toMatchObject({ name: 'build', command: 'echo building; echo broken-output >&2; exit 3', status: 'failed', exitCode: 3 });
    expect(checks[0].outputTail).toContain('building\nbroken-output');
    expect(checks[1]).toMatchObject({ name: 'test', status: 'skipped', exitCode: null, outputTail: '' });
  }, budget(300_000));
});
