import { describe, expect, it } from 'vitest';
import { readCallLog } from '../../src/agents/scripted.js';
import { parseJob } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { runPipeline } from '../../src/executor/run.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { resultData, sandbox } from './helpers.js';

const subtasks = [
  { title: 'Define the greeting API', complexity: 'easy', priority: 'P0', deps: [], ownedFiles: ['src/api.ts'], expectedOutput: 'an interface' },
  { title: 'Implement the greeter', complexity: 'medium', priority: 'P1', deps: [0], ownedFiles: ['src/greeter.ts'], expectedOutput: 'greet()' },
  { title: 'Document it', complexity: 'easy', priority: 'P2', deps: [0, 1], ownedFiles: ['README.md'], expectedOutput: 'a section' },
];

describe('planner pipeline', () => {
  it('turns the agent plan into subtasks whose deps are indices, and records usage', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'plan', title: 'greeting' }, actions: [{ text: 'Thinking about it.' }, { plan: { plan: 'Three steps.', subtasks } }] }]);
    const runDir = sb.runDir('plan');
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan', model: { tier: 'hard' } }, script)), { runDir });
    expect(record.type).toBe('result');
    if (record.type !== 'result') return;
    const data = record.data as { plan: string; subtasks: Array<{ title: string; deps: number[]; priority: number; complexity: string }>; markdown: string };
    expect(data.plan).toBe('Three steps.');
    expect(data.subtasks.map((s) => s.title)).toEqual(subtasks.map((s) => s.title));
    expect(data.subtasks.map((s) => s.deps)).toEqual([[], [0], [0, 1]]);
    expect(data.subtasks.map((s) => s.priority)).toEqual([0, 1, 2]);
    expect(data.markdown).toContain('| 1 | Implement the greeter | medium | P1 | 0 |');
    expect(record.usage.agentCalls).toBe(1);
    // Hard complexity plans on the strongest tier.
    expect(record.usage.models).toEqual(['opus']);
    const { records } = readOutbox(runDir);
    expect(records.filter((r) => r.type === 'token').map((r) => (r as { text: string }).text)[0]).toBe('Thinking about it.');
    expect(records.every((r) => r.traceId === 'trace-run-plan')).toBe(true);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
  });

  it("plans a rejected plan's next version with the person's reason in the prompt", async () => {
    using sb = sandbox();
    // Only a prompt that carries the reason gets the three-subtask plan; any other gets the old two.
    const script = sb.script([
      { match: { role: 'plan', prompt: 'Use three subtasks, not two' }, actions: [{ plan: { plan: 'Three, as asked.', subtasks } }] },
      { match: { role: 'plan' }, actions: [{ plan: { plan: 'Two again.', subtasks: subtasks.slice(0, 2) } }] },
    ]);
    const feedback = 'plan_review rejected by human: Use three subtasks, not two';
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan', task: { title: 'Add greeting', complexity: 'hard', version: 2, feedback } }, script)), { runDir: sb.runDir('plan') });
    expect(resultData<{ plan: string }>(record).plan).toBe('Three, as asked.');
  });

  it('retries a malformed plan once with the parse error in the prompt', async () => {
    using sb = sandbox();
    const bad = { title: 'Loop', complexity: 'easy', priority: 'P1', deps: [1], ownedFiles: [], expectedOutput: '' };
    const script = sb.script([
      { match: { role: 'plan', prompt: 'could not be used' }, actions: [{ plan: { plan: 'Fixed.', subtasks: subtasks.slice(0, 2) } }] },
      { match: { role: 'plan' }, actions: [{ answer: '```json\n' + JSON.stringify({ plan: 'x', subtasks: [bad, { ...bad, title: 'Loop 2', deps: [0] }] }) + '\n```' }] },
    ]);
    const runDir = sb.runDir('plan');
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan' }, script)), { runDir });
    expect(record.type).toBe('result');
    expect(resultData<{ plan: string }>(record).plan).toBe('Fixed.');
    const calls = readCallLog(join(sb.root, 'calls.ndjson'));
    expect(calls.map((c) => c.step)).toEqual([1, 0]);
  });

  it('sends a twice-malformed plan to needs_attention with the parse error', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'plan' }, actions: [{ answer: 'I will just start coding.' }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan' }, script)), { runDir: sb.runDir('plan') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('PLAN_INVALID');
    expect(record.needsAttention?.reason).toBe('plan_invalid');
    expect(record.message).toMatch(/no ```json block/);
    expect(record.usage.agentCalls).toBe(2);
  });

  it("refuses a plan of more subtasks than the project's limit, asks once for a smaller one, then tells a person", async () => {
    using sb = sandbox();
    const many = Array.from({ length: 3000 }, (_, i) => ({ title: `Step ${i}`, complexity: 'easy' }));
    const script = sb.script([{ match: { role: 'plan' }, actions: [{ answer: '```json\n' + JSON.stringify({ plan: 'p', subtasks: many }) + '\n```' }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan' }, script)), { runDir: sb.runDir('plan') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('PLAN_INVALID');
    expect(record.needsAttention?.reason).toBe('plan_invalid');
    expect(record.usage.agentCalls).toBe(2);
    expect(record.message).toContain('the plan has 3,000 subtasks, more than the limit of 100 (limits.maxSubtasks in .maestro/config.json)');
    // The project's own limit: three subtasks are too many for 2.
    const three = sb.script([{ match: { role: 'plan' }, actions: [{ plan: { plan: 'Three steps.', subtasks } }] }]);
    const limited = await runPipeline(parseJob(sb.job({ kind: 'plan', limits: { maxSubtasks: 2 } }, three)), { runDir: sb.runDir('plan2') });
    expect((limited as { message?: string }).message).toContain('the plan has 3 subtasks, more than the limit of 2');
  });

  it('refuses deps that are out of range or cyclic', async () => {
    using sb = sandbox();
    const cyclic = [
      { title: 'A', complexity: 'easy', deps: [1] },
      { title: 'B', complexity: 'easy', deps: [0] },
      { title: 'C', complexity: 'easy', deps: [7] },
    ];
    const script = sb.script([{ match: { role: 'plan' }, actions: [{ answer: '```json\n' + JSON.stringify({ plan: 'p', subtasks: cyclic }) + '\n```' }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan' }, script)), { runDir: sb.runDir('plan') });
    expect(record.type).toBe('error');
    expect((record as { message: string }).message).toMatch(/subtasks\.2\.deps: 7 is not the index/);
  });

  it('holds subtasks to the task rules: a path outside the repository or a title a task may not have is the planner’s to fix', async () => {
    using sb = sandbox();
    const bad = [
      { title: 'Touch outside', complexity: 'easy', deps: [], ownedFiles: ['../outside.txt', '/etc/passwd'] },
      { title: 'x'.repeat(600), complexity: 'easy', deps: [] },
      { title: 'two\nlines', complexity: 'easy', deps: [] },
    ];
    const script = sb.script([{ match: { role: 'plan' }, actions: [{ answer: '```json\n' + JSON.stringify({ plan: 'p', subtasks: bad }) + '\n```' }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'plan' }, script)), { runDir: sb.runDir('plan') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('PLAN_INVALID');
    // Asked again with the problems, then a person: never a plan whose approval fails on it.
    expect(record.usage.agentCalls).toBe(2);
    expect(record.message).toMatch(/subtasks\.0\.ownedFiles\.0: must be a path inside the repository/);
    expect(record.message).toMatch(/subtasks\.0\.ownedFiles\.1: must be a path inside the repository/);
    expect(record.message).toMatch(/subtasks\.1\.title: Too big/);
    expect(record.message).toMatch(/subtasks\.2\.title: must be one line/);
  });

  it('plans in a throwaway checkout: an agent that writes anyway never touches main', async () => {
    using sb = sandbox();
    const planJson = JSON.stringify({ plan: 'p', subtasks: [{ title: 'Only step', complexity: 'easy' }] });
    // A CLI agent that ignores read-only instructions and writes a file before answering.
    const agent = `require("fs").writeFileSync("hack.txt","x");console.log("\\x60\\x60\\x60json\\n"+${JSON.stringify(planJson)}+"\\n\\x60\\x60\\x60")`;
    const job = parseJob({ ...sb.job({ kind: 'plan' }, 'unused'), provider: { kind: 'command', command: [process.execPath, '-e', agent] } });
    const record = await runPipeline(job, { runDir: sb.runDir('plan') });
    expect(resultData<{ subtasks: unknown[] }>(record).subtasks).toHaveLength(1);
    expect(existsSync(join(sb.repo, 'hack.txt'))).toBe(false);
    expect(sb.git('status', '--porcelain')).toBe('');
    expect(sb.git('worktree', 'list')).not.toContain('T1-plan');
  });
});
