/**
 * The agent CLI providers inside a real pipeline run (runPipeline on a real
 * git repository): a rate limit walks the model fallback chain and then needs
 * a human with the reason; a stream that breaks off does the same; lines that
 * were not JSON land in the transcript with their line numbers; tool calls
 * are phase records, and an error after one still names the agent stage.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliToolKind } from '../../src/agents/cli/tools.js';
import { parseJob } from '../../src/executor/protocol/job.js';
import { readOutbox, type ErrorRecord } from '../../src/executor/protocol/outbox.js';
import { readTranscript } from '../../src/executor/protocol/transcript.js';
import { runPipeline } from '../../src/executor/run.js';
import { resultData, sandbox, type Sandbox } from '../executor/helpers.js';
import { FAKES } from './fakes/bin.js';

function job(sb: Sandbox, kind: CliToolKind, scenario: string, executable = FAKES[kind]) {
  return parseJob({
    ...sb.job({ kind: 'execute', task: { title: 'Greet', complexity: 'medium', ownedFiles: [] } }, 'unused'),
    provider: { kind, executable, models: { hard: 'big', medium: 'mid', easy: 'small' }, env: { FAKE_AGENT_SCENARIO: scenario, FAKE_AGENT_LOG: join(sb.root, 'launches.ndjson') } },
  });
}

const launches = (sb: Sandbox) => readFileSync(join(sb.root, 'launches.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { env: Record<string, string> });

describe('agent CLIs in a pipeline run', () => {
  it('a rate limit falls back to the next weaker model once, then needs a human with the reason (cursor)', async () => {
    using sb = sandbox();
    const record = await runPipeline(job(sb, 'cursor', 'ratelimit'), { runDir: sb.runDir('r') }) as ErrorRecord;
    expect(record).toMatchObject({ type: 'error', code: 'AGENT_RATE_LIMITED', stage: 'agent', needsAttention: { reason: 'agent_rate_limited' } });
    expect(record.message).toMatch(/Cursor Agent was rate limited by its model provider: Error: rate limit exceeded/);
    expect(launches(sb).map((l) => l.env.MAESTRO_MODEL)).toEqual(['mid', 'small']);
    expect(record.usage.models).toEqual(['mid', 'small']);
    const failed = readOutbox(sb.runDir('r')).records.filter((r) => r.type === 'phase' && r.stage === 'agent' && r.state === 'failed');
    // One failure per model (the first falls back), then the stage's own.
    expect(failed.map((r) => (r as { detail: { fallingBack?: boolean } }).detail.fallingBack)).toEqual([true, false, undefined]);
  });

  it('a stream that breaks off mid-run fails the run with the tool\'s last stderr lines, in the stage it broke in (codex)', async () => {
    using sb = sandbox();
    const runDir = sb.runDir('r');
    const record = await runPipeline(job(sb, 'codex', 'truncated'), { runDir }) as ErrorRecord;
    expect(record).toMatchObject({ code: 'AGENT_STREAM_BROKEN', stage: 'agent', needsAttention: { reason: 'agent_stream_broken' } });
    expect(record.message).toContain("last stderr: thread 'main' panicked at core/src/codex.rs:1: connection reset by peer");
    // The tool call that had started before the crash was shown; the error still belongs to the agent stage.
    expect(readOutbox(runDir).records.some((r) => r.type === 'phase' && r.stage === 'tool:command_execution' && r.state === 'start')).toBe(true);
  });

  it('a missing tool stops at once: a weaker model cannot install it (codex)', async () => {
    using sb = sandbox();
    const record = await runPipeline(job(sb, 'codex', 'work', join(sb.root, 'no-codex-here')), { runDir: sb.runDir('r') }) as ErrorRecord;
    expect(record).toMatchObject({ code: 'AGENT_NOT_INSTALLED', needsAttention: { reason: 'agent_not_installed' } });
    expect(record.usage.models).toEqual(['mid']);
  });

  it('keeps lines that were not JSON in the transcript with their line numbers, and shows each tool call as phases (gemini)', async () => {
    using sb = sandbox();
    const runDir = sb.runDir('r');
    const record = await runPipeline(job(sb, 'gemini', 'malformed'), { runDir });
    const data = resultData<{ diff: { files: string[] } }>(record);
    expect(data.diff.files).toEqual(['hello.txt']);
    const notices = readTranscript(runDir).entries.filter((e) => e.role === 'notice');
    expect(notices).toEqual([expect.objectContaining({ stage: 'agent', text: expect.stringMatching(/line 3: Loaded cached credentials\..*event types ignored: telemetry ×1/) })]);
    const tools = readOutbox(runDir).records.filter((r) => r.type === 'phase' && r.stage.startsWith('tool:'));
    expect(tools.map((r) => [(r as { stage: string }).stage, (r as { state: string }).state])).toEqual([
      ['tool:run_shell_command', 'start'], ['tool:run_shell_command', 'done'], ['tool:write_file', 'start'], ['tool:write_file', 'done'],
    ]);
  });
});
