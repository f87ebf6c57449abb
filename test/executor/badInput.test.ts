/** Bad input at the run layer: each gets a clear error record with needsAttention, and main is never touched. */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendInbox } from '../../src/executor/protocol/inbox.js';
import { parseJob } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { runPipeline } from '../../src/executor/run.js';
import { MAX_QUESTION_CHARS } from '../../src/executor/context.js';
import { resultData, sandbox } from './helpers.js';

describe('bad input at the run layer', () => {
  it('a project path that is not a repository', async () => {
    using sb = sandbox();
    const plain = join(sb.root, 'plain');
    mkdirSync(plain);
    const script = sb.script([{ actions: [{ text: 'x' }] }]);
    const job = parseJob(sb.job({ kind: 'execute', project: { id: 'p', repoPath: plain, worktreeRoot: sb.worktrees } }, script));
    const record = await runPipeline(job, { runDir: sb.runDir('r') });
    expect(record).toMatchObject({ type: 'error', code: 'NOT_A_REPOSITORY', needsAttention: { reason: 'not_a_repository' } });
    expect((record as { message: string }).message).toBe(`${plain} is not a git repository`);
  });

  it('git missing from PATH', async () => {
    using sb = sandbox();
    const script = sb.script([{ actions: [{ text: 'x' }] }]);
    const job = parseJob(sb.job({ kind: 'execute' }, script));
    const path = process.env.PATH;
    process.env.PATH = join(sb.root, 'empty-bin');
    try {
      const record = await runPipeline(job, { runDir: sb.runDir('r') });
      expect(record).toMatchObject({ type: 'error', code: 'GIT_MISSING', needsAttention: { reason: 'git_missing' } });
      expect((record as { message: string }).message).toMatch(/git was not found on PATH/);
    } finally {
      process.env.PATH = path;
    }
  });

  it('an invalid agent script names the file and line; main is unchanged', async () => {
    using sb = sandbox();
    const mainBefore = sb.git('rev-parse', 'main');
    const script = join(sb.root, 'bad.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - launch: rockets\n');
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute' }, script)), { runDir: sb.runDir('r') });
    expect(record).toMatchObject({ type: 'error', code: 'SCRIPT_INVALID', needsAttention: { reason: 'script_invalid' } });
    expect((record as { message: string }).message).toMatch(/bad\.yaml:4: steps\.0\.actions\.0/);
    expect(sb.git('rev-parse', 'main')).toBe(mainBefore);
    expect(sb.git('status', '--porcelain')).toBe('');
  });

  it('a bad .maestro config is refused with its path before any agent runs', async () => {
    using sb = sandbox();
    sb.commitFile('.maestro/config.json', JSON.stringify({ checks: [{ name: 'lint' }] }));
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'a.txt', content: 'a\n' } }] }]);
    const record = await runPipeline(parseJob({ ...sb.job({ kind: 'execute' }, script), checks: undefined }), { runDir: sb.runDir('r') });
    expect(record).toMatchObject({ type: 'error', code: 'CONFIG_INVALID' });
    expect((record as { message: string }).message).toMatch(/\.maestro\/config\.json: checks/);
    expect(record.usage.agentCalls).toBe(0);
  });

  it('a check command with bytes that are not UTF-8 is refused naming the file and the check; nothing is run', async () => {
    using sb = sandbox();
    const ran = join(sb.root, 'ran');
    // `touch <root>/ran<é>` in Latin-1: the one byte 0xE9, which is not UTF-8.
    const config = Buffer.concat([Buffer.from(`{"checks": {"test": "touch ${ran}`), Buffer.from([0xe9]), Buffer.from('"}}\n')]);
    mkdirSync(join(sb.repo, '.maestro'));
    writeFileSync(join(sb.repo, '.maestro', 'config.json'), config);
    sb.git('add', '--', '.maestro/config.json');
    sb.git('commit', '-q', '-m', 'checks in Latin-1');
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'a.txt', content: 'a\n' } }] }]);
    const record = await runPipeline(parseJob({ ...sb.job({ kind: 'execute' }, script), checks: undefined }), { runDir: sb.runDir('r') });
    expect(record).toMatchObject({ type: 'error', code: 'CONFIG_INVALID', needsAttention: { reason: 'config_invalid' } });
    const message = (record as { message: string }).message;
    expect(message).toContain(`${join(sb.repo, '.maestro', 'config.json')}: checks.test.command: holds bytes that are not UTF-8`);
    expect(record.usage.agentCalls).toBe(0);
    expect(existsSync(`${ran}\ufffd`)).toBe(false);
    expect(readdirSync(sb.root).filter((n) => n.startsWith('ran'))).toEqual([]);
  });
});

describe('human in the loop', () => {
  it('an injected instruction reaches the next agent prompt, once', async () => {
    using sb = sandbox();
    const script = sb.script([
      { match: { role: 'execute', prompt: 'Use British spelling' }, actions: [{ write: { path: 'colour.txt', content: 'colour\n' } }] },
      { match: { role: 'execute' }, actions: [{ write: { path: 'color.txt', content: 'color\n' } }] },
    ]);
    const runDir = sb.runDir('r');
    appendInbox(runDir, { type: 'instruction', text: 'Use British spelling' });
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute' }, script)), { runDir });
    expect(resultData<{ diff: { files: string[] } }>(record).diff.files).toEqual(['colour.txt']);
    expect(JSON.parse(readFileSync(join(runDir, 'stages.json'), 'utf8')).consumedInbox).toHaveLength(1);
  });

  it('an agent that cannot pause asks with CLARIFY: and is run again with the answer', async () => {
    using sb = sandbox();
    // A CLI agent: asks first; once the prompt carries the answer, writes it down.
    const agent = `let p="";process.stdin.on("data",d=>p+=d).on("end",()=>{const m=/The answer: (.*)/.exec(p);if(!m){console.log("CLARIFY: Which port?");return}require("fs").writeFileSync("port.txt",m[1]+"\\n");console.log("done")})`;
    const runDir = sb.runDir('r');
    const job = parseJob({ ...sb.job({ kind: 'execute', inboxPollMs: 10 }, 'unused'), provider: { kind: 'command', command: [process.execPath, '-e', agent] } });
    const running = runPipeline(job, {
      runDir,
      onRecord: (r) => {
        if (r.type === 'clarify') appendInbox(runDir, { type: 'reply', text: '8080', replyTo: r.clarifyId });
      },
    });
    const record = await running;
    const data = resultData<{ worktreePath: string }>(record);
    expect(readFileSync(join(data.worktreePath, 'port.txt'), 'utf8')).toBe('8080\n');
    const clarify = readOutbox(runDir).records.filter((r) => r.type === 'clarify');
    expect(clarify.map((r) => (r as { question: string }).question)).toEqual(['Which port?']);
    expect(record.usage.agentCalls).toBe(2);
  });

  it('a question longer than a person is asked is cut, saying how long it is; the transcript keeps it whole', async () => {
    using sb = sandbox();
    const agent = `let p="";process.stdin.on("data",d=>p+=d).on("end",()=>{if(!/The answer: /.test(p)){console.log("CLARIFY: "+"Q".repeat(100000));return}console.log("done")})`;
    const runDir = sb.runDir('r');
    const job = parseJob({ ...sb.job({ kind: 'execute', inboxPollMs: 10 }, 'unused'), provider: { kind: 'command', command: [process.execPath, '-e', agent] } });
    await runPipeline(job, {
      runDir,
      onRecord: (r) => {
        if (r.type === 'clarify') appendInbox(runDir, { type: 'reply', text: 'yes', replyTo: r.clarifyId });
      },
    });
    const [asked] = readOutbox(runDir).records.filter((r) => r.type === 'clarify') as Array<{ question: string }>;
    expect(asked!.question).toBe(`${'Q'.repeat(MAX_QUESTION_CHARS)}… (the question is 100,000 characters; the whole of it is in the run's transcript)`);
    expect(readFileSync(join(runDir, 'transcript.jsonl'), 'utf8')).toContain(`"text":"${'Q'.repeat(100_000)}"`);
  });
});
