/**
 * The claude provider inside a real pipeline run: the Agent SDK drives the fake
 * Claude Code; its tokens land in the outbox, its usage and cost in the result,
 * and a `CLARIFY:` answer becomes a clarify record and a resumed session.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { appendInbox } from '../../src/executor/protocol/inbox.js';
import { parseJob } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { runPipeline } from '../../src/executor/run.js';
import { resultData, sandbox } from './helpers.js';

const FAKE = fileURLToPath(new URL('../agents/fake-claude.mjs', import.meta.url));

describe('execute with the claude provider', () => {
  it('asks through the inbox, resumes the session with the reply, and records usage and cost', async () => {
    using sb = sandbox();
    const runDir = sb.runDir('r');
    const job = parseJob({
      ...sb.job({ kind: 'execute', inboxPollMs: 10 }, 'unused'),
      provider: { kind: 'claude', executable: FAKE, env: { FAKE_CLAUDE_MODE: 'clarify', FAKE_CLAUDE_LOG: join(sb.root, 'fake.log') } },
    });
    const record = await runPipeline(job, {
      runDir,
      onRecord: (r) => {
        if (r.type === 'clarify') appendInbox(runDir, { type: 'reply', text: 'teal', replyTo: r.clarifyId });
      },
    });
    const data = resultData<{ worktreePath: string; diff: { files: string[] } }>(record);
    expect(readFileSync(join(data.worktreePath, 'colour.txt'), 'utf8')).toBe('teal\n');
    expect(data.diff.files).toEqual(['colour.txt']);
    const records = readOutbox(runDir).records;
    expect(records.filter((r) => r.type === 'clarify').map((r) => (r as { question: string }).question)).toEqual(['Which colour?']);
    const streamed = records.filter((r) => r.type === 'token').map((r) => (r as { text: string }).text).join('');
    expect(streamed).toContain('Resumed fake-session-1 with: teal');
    expect(record.usage).toMatchObject({ inputTokens: 240, agentCalls: 2, models: ['sonnet', 'sonnet'] });
    expect(record.usage.costUsd).toBeCloseTo(0.0084, 6);
    const launches = readFileSync(join(sb.root, 'fake.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { args: string[] });
    expect(launches[1]!.args.join(' ')).toMatch(/--resume[= ]fake-session-1/);
  });
});
