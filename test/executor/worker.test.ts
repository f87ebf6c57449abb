/**
 * The worker as a real process on a run directory: killed and restarted it
 * repeats no finished stage; SIGTERM ends it with a whole final record; a
 * clarifying question waits for a reply in inbox.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCallLog } from '../../src/agents/scripted.js';
import { appendInbox } from '../../src/executor/protocol/inbox.js';
import { writeJob } from '../../src/executor/protocol/job.js';
import { readOutbox, OUTBOX_FILE, type OutboxRecord } from '../../src/executor/protocol/outbox.js';
import { readTranscript } from '../../src/executor/protocol/transcript.js';
import { spawnWorker } from '../../src/executor/spawn.js';
import { resultData, sandbox } from './helpers.js';
import { waitForRecord } from './waitFor.js';
import { poll } from '../helpers/wait.js';

const isFinal = (r: OutboxRecord) => r.type === 'result' || r.type === 'error';

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('worker process', () => {
  it('killed mid-run and restarted, it repeats no finished stage', async () => {
    using sb = sandbox();
    const marker = join(sb.root, 'let-the-check-pass');
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ text: 'working' }, { write: { path: 'out.txt', content: 'done\n' } }] }]);
    // The check waits for the marker, so the first worker is surely inside it when killed.
    const waitForMarker = `const fs=require('fs');const f=process.argv[1];const t=()=>fs.existsSync(f)&&process.exit(0);t();setInterval(t,20)`;
    const runDir = sb.runDir('exec');
    writeJob(runDir, sb.job({ kind: 'execute', checks: [{ name: 'gate', command: ['node', '-e', waitForMarker, marker] }], heartbeatMs: 100 }, script));

    const first = spawnWorker(runDir);
    await waitForRecord(runDir, (r) => r.type === 'phase' && r.stage === 'check:gate' && r.state === 'start');
    first.kill();
    const ended = await first.exited;
    expect(ended.signal).toBe('SIGKILL');
    const beforeRestart = readOutbox(runDir).records;
    expect(beforeRestart.some(isFinal)).toBe(false);

    writeFileSync(marker, '');
    const second = spawnWorker(runDir);
    expect((await second.exited).code).toBe(0);
    const records = readOutbox(runDir).records;
    const final = records.find(isFinal)!;
    expect(final.type, JSON.stringify(final)).toBe('result');
    // One agent call in all: the restarted worker skipped the finished stages.
    expect(readCallLog(join(sb.root, 'calls.ndjson'))).toHaveLength(1);
    // The result still counts the call the first worker made.
    expect((final as { usage: { agentCalls: number } }).usage.agentCalls).toBe(1);
    const afterRestart = records.slice(beforeRestart.length);
    const skipped = afterRestart.filter((r) => r.type === 'phase' && r.state === 'skipped').map((r) => (r as { stage: string }).stage);
    expect(skipped).toEqual(['worktree', 'agent']);
    expect(afterRestart.some((r) => r.type === 'phase' && r.stage === 'check:gate' && r.state === 'done')).toBe(true);
    // Sequence numbers continue across the restart, and the first worker heartbeated.
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    expect(beforeRestart.some((r) => r.type === 'heartbeat' && r.pid === first.pid)).toBe(true);
  });

  it('on SIGTERM ends with a whole INTERRUPTED record and exits 0', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ text: 'about to think for a long time' }, { hang: true }] }]);
    const runDir = sb.runDir('exec');
    writeJob(runDir, sb.job({ kind: 'execute' }, script));
    const worker = spawnWorker(runDir);
    await waitForRecord(runDir, (r) => r.type === 'token');
    worker.stop();
    expect((await worker.exited).code).toBe(0);
    const text = readFileSync(join(runDir, OUTBOX_FILE), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const records = readOutbox(runDir).records;
    expect(records.length).toBe(text.trim().split('\n').length);
    const final = records.filter(isFinal);
    expect(final).toHaveLength(1);
    expect(final[0]).toMatchObject({ type: 'error', code: 'INTERRUPTED', retryable: true, stage: 'agent' });
    expect(pidAlive(worker.pid)).toBe(false);
  });

  it('a clarifying question waits for a reply in inbox.json and the run goes on with it', async () => {
    using sb = sandbox();
    const script = sb.script([{
      match: { role: 'execute' },
      actions: [{ ask: 'Which greeting should it use?' }, { write: { path: 'greeting.txt', content: '{{reply}}\n' } }],
    }]);
    const runDir = sb.runDir('exec');
    writeJob(runDir, sb.job({ kind: 'execute', inboxPollMs: 20 }, script));
    const worker = spawnWorker(runDir);
    const clarify = await waitForRecord(runDir, (r) => r.type === 'clarify');
    if (clarify.type !== 'clarify') throw new Error('unreachable');
    expect(clarify.question).toBe('Which greeting should it use?');
    appendInbox(runDir, { type: 'reply', text: 'hola', replyTo: clarify.clarifyId });
    expect((await worker.exited).code).toBe(0);
    const final = readOutbox(runDir).records.find(isFinal)!;
    expect(final.type, JSON.stringify(final)).toBe('result');
    const wt = resultData<{ worktreePath: string }>(final).worktreePath;
    expect(readFileSync(join(wt, 'greeting.txt'), 'utf8')).toBe('hola\n');
    const roles = readTranscript(runDir).entries.map((e) => e.role);
    expect(roles).toEqual(expect.arrayContaining(['prompt', 'question', 'reply', 'agent']));
  });

  it('a reply wakes the waiting worker when it is written, not at its next poll', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ ask: 'Tabs or spaces?' }, { write: { path: 'style.txt', content: '{{reply}}\n' } }] }]);
    const runDir = sb.runDir('exec');
    // A poll so long that only the watch on the run directory can bring the reply within the test's time.
    writeJob(runDir, sb.job({ kind: 'execute', inboxPollMs: 10 * 60_000 }, script));
    const worker = spawnWorker(runDir);
    const clarify = await waitForRecord(runDir, (r) => r.type === 'clarify');
    if (clarify.type !== 'clarify') throw new Error('unreachable');
    appendInbox(runDir, { type: 'reply', text: 'tabs', replyTo: clarify.clarifyId });
    expect((await worker.exited).code).toBe(0);
    const final = readOutbox(runDir).records.find(isFinal)!;
    expect(readFileSync(join(resultData<{ worktreePath: string }>(final).worktreePath, 'style.txt'), 'utf8')).toBe('tabs\n');
  });

  it('killed while waiting for a reply, the restarted worker asks under the same id and takes the reply', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ ask: 'Tabs or spaces?' }, { write: { path: 'style.txt', content: '{{reply}}\n' } }] }]);
    const runDir = sb.runDir('exec');
    writeJob(runDir, sb.job({ kind: 'execute', inboxPollMs: 20 }, script));
    appendInbox(runDir, { type: 'instruction', text: 'keep it short' });
    const first = spawnWorker(runDir);
    const asked = await waitForRecord(runDir, (r) => r.type === 'clarify');
    first.kill();
    await first.exited;
    const second = spawnWorker(runDir);
    const records = () => readOutbox(runDir).records.filter((r) => r.type === 'clarify');
    await waitForRecord(runDir, (r) => r.type === 'clarify' && r.seq > asked.seq);
    expect(new Set(records().map((r) => (r as { clarifyId: string }).clarifyId)).size).toBe(1);
    // The daemon answers the question it saw before the crash.
    appendInbox(runDir, { type: 'reply', text: 'tabs', replyTo: (asked as { clarifyId: string }).clarifyId });
    expect((await second.exited).code).toBe(0);
    const final = readOutbox(runDir).records.find(isFinal)!;
    expect(readFileSync(join(resultData<{ worktreePath: string }>(final).worktreePath, 'style.txt'), 'utf8')).toBe('tabs\n');
    // The instruction taken by the killed worker reached the restarted agent call too.
    const prompts = readTranscript(runDir).entries.filter((e) => e.role === 'prompt').map((e) => e.text);
    expect(prompts).toHaveLength(2);
    expect(prompts.every((p) => p.includes('keep it short'))).toBe(true);
  });

  it('killed after it took a reply, the restarted worker keeps the answer: the same question is not asked again', async () => {
    using sb = sandbox();
    // The first call takes the answer and is killed before it uses it; the replayed call asks the same question.
    const script = sb.script([
      { match: { role: 'execute' }, times: 1, actions: [{ ask: 'Which name?' }, { hang: true }] },
      { match: { role: 'execute' }, actions: [{ ask: 'Which name?' }, { write: { path: 'name.txt', content: '{{reply}}\n' } }] },
    ]);
    const runDir = sb.runDir('exec');
    writeJob(runDir, sb.job({ kind: 'execute', inboxPollMs: 20 }, script));
    const first = spawnWorker(runDir);
    const asked = await waitForRecord(runDir, (r) => r.type === 'clarify');
    appendInbox(runDir, { type: 'reply', text: 'banana', replyTo: (asked as { clarifyId: string }).clarifyId });
    await poll(() => readTranscript(runDir).entries.some((e) => e.role === 'reply'), 'the first worker taking the reply', 60_000);
    first.kill();
    await first.exited;
    const second = spawnWorker(runDir);
    expect((await second.exited).code).toBe(0);
    const records = readOutbox(runDir).records;
    expect(records.filter((r) => r.type === 'clarify')).toHaveLength(1);
    const final = records.find(isFinal)!;
    expect(final.type, JSON.stringify(final)).toBe('result');
    expect(readFileSync(join(resultData<{ worktreePath: string }>(final).worktreePath, 'name.txt'), 'utf8')).toBe('banana\n');
  });

  it('refuses an unknown provider with a needs-attention error record and exit 2', async () => {
    using sb = sandbox();
    const runDir = sb.runDir('bad');
    writeFileSync(join(runDir, 'job.json'), JSON.stringify({ ...sb.job({ kind: 'execute' }, 'x.yaml'), provider: { kind: 'gpt-9000' } }));
    const worker = spawnWorker(runDir);
    expect((await worker.exited).code).toBe(2);
    const [record] = readOutbox(runDir).records;
    expect(record).toMatchObject({ type: 'error', code: 'UNKNOWN_PROVIDER', runId: 'run-execute', needsAttention: { reason: 'unknown_provider' } });
    expect((record as { message: string }).message).toMatch(/unknown agent provider "gpt-9000" \(provider\.kind\)/);
    expect(existsSync(sb.worktrees)).toBe(false);
  });
});
