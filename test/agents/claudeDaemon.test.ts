/**
 * A task through the daemon with the real Claude Code (the Agent SDK's bundled binary) as its agent, only
 * the model faked (test/helpers/modelApi.ts): planned in plan mode, executed with Claude Code's own Bash
 * tool, reviewed twice, approved and merged, every Claude Code process in the agent sandbox (the default
 * where bwrap works). What the agent's shell saw is what the model got back from its tool call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { startModelApi, type ModelApi, type ModelRequest, type Turn } from '../helpers/modelApi.js';
import { makeRepo } from '../helpers/repo.js';

const unusable = bwrapUnusable();
let d: TestDaemon | null = null;
let api: ModelApi | null = null;
afterEach(async () => {
  await d?.stop({ graceMs: 2000 });
  await api?.close();
  d = null;
  api = null;
  removeTempDirs();
});

/** Everything the user's side of the conversation says: Maestro's prompt, and the tool results after it. */
const userText = (r: ModelRequest) => JSON.stringify(r.messages.filter((m) => m.role === 'user'));
const fenced = (value: object) => `\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;

/** Maestro's three prompts, answered as a model would: a plan, a shell command then a closing line, a verdict. */
function model(home: string) {
  return (r: ModelRequest): Turn => {
    const said = userText(r);
    if (said.includes('Break this task into subtasks')) {
      return { text: `One step.\n\n${fenced({ plan: 'Write the greeting.', subtasks: [{ title: 'Write the greeting', complexity: 'easy', ownedFiles: ['hello.txt'] }] })}` };
    }
    if (said.includes('review, read-only)')) return { text: fenced({ verdict: 'approve', summary: 'Fine.', findings: [] }) };
    if (!said.includes('tool_result')) {
      return { tool: 'Bash', input: { command: `printf 'hello from claude\\n' > hello.txt; cat ${join(home, 'token')}; echo "pid $$"`, description: 'write the greeting' } };
    }
    return { text: 'Wrote hello.txt.' };
  };
}

describe.skipIf(unusable)('the real Claude Code as the agent of a daemon', () => {
  it('plans, executes, reviews and merges a task, in the sandbox: the shell it ran found no token', { timeout: budget(300_000) }, async () => {
    const home = tempDir('maestro-home-');
    api = await startModelApi(model(home));
    const userHome = tempDir('maestro-user-home-');
    d = await startTestDaemon({ home, tickMs: 100 }, {
      workerEnv: { HOME: userHome, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: 'sk-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
    });
    expect(d.config.agentSandbox).not.toBeNull();
    const repo = makeRepo();
    const project = await d.store.projects.create({ name: 'greet', repoPath: repo, config: { provider: { kind: 'claude' }, autoApproveAfterMs: 0 } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet the user', complexity: 'medium' });
    d.orchestrator.kick();

    const done = await taskDone(d, task.id, 240_000);
    expect(done.status).toBe('done');
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello from claude\n');
    const runs = await d.store.runs.list({ taskId: task.id });
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['plan', 'succeeded'], ['execute', 'succeeded'], ['review', 'succeeded']]);
    for (const run of runs) expect(run.inputTokens).toBeGreaterThan(0);

    const shell = api.requests.map(userText).find((t) => t.includes('pid '))!;
    expect(shell).toMatch(/token: No such file or directory/);
    expect(shell).not.toContain(readFileSync(join(home, 'token'), 'utf8').trim());
    expect(Number(/pid (\d+)/.exec(shell)![1])).toBeLessThan(200);
  });
});
