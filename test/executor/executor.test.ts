import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { runPipeline } from '../../src/executor/run.js';
import { MAX_REFLECTION_CHARS } from '../../src/executor/pipelines/executor.js';
import { resultData, sandbox } from './helpers.js';

const writeGreeting = { match: { role: 'execute' }, actions: [{ text: 'Writing src/greet.ts' }, { write: { path: 'src/greet.ts', content: 'export const greet = () => "hi";\n' } }] };

describe('executor pipeline', () => {
  it('commits the agent change on the task branch in its own worktree and leaves main alone', async () => {
    using sb = sandbox();
    const mainBefore = sb.git('rev-parse', 'main');
    const script = sb.script([writeGreeting]);
    const runDir = sb.runDir('exec');
    const job = parseJob(sb.job({ kind: 'execute', task: { title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/**'] } }, script));
    const record = await runPipeline(job, { runDir });
    expect(record.type, JSON.stringify(record)).toBe('result');
    const data = (record as { data: Record<string, any> }).data;
    expect(data.branch).toBe('maestro/T1-v1');
    expect(data.worktreePath).toBe(join(sb.worktrees, 'T1-v1'));
    expect(readFileSync(join(data.worktreePath, 'src/greet.ts'), 'utf8')).toContain('greet');
    expect(sb.git('rev-parse', 'maestro/T1-v1')).toBe(data.commitSha);
    expect(sb.git('log', '-1', '--format=%s', 'maestro/T1-v1')).toContain('Add greeting');
    expect(data.diff).toMatchObject({ files: ['src/greet.ts'], filesChanged: 1, linesAdded: 1, linesDeleted: 0, outsideOwned: [] });
    expect(sb.git('rev-parse', 'main')).toBe(mainBefore);
    expect(existsSync(join(sb.repo, 'src/greet.ts'))).toBe(false);
    // Easy tasks run on the easy tier.
    expect(record.usage.models).toEqual(['haiku']);
  });

  it('runs each project check as its own gate and stops at a failing one, keeping its log', async () => {
    using sb = sandbox();
    sb.commitFile('.maestro/config.json', JSON.stringify({
      checks: {
        lint: 'echo lint ok',
        test: 'echo "1 test failed: greet returns hi" >&2; exit 3',
        build: 'echo never runs',
      },
    }));
    const script = sb.script([writeGreeting]);
    const runDir = sb.runDir('exec');
    const job = parseJob({ ...sb.job({ kind: 'execute' }, script), checks: undefined });
    const record = await runPipeline(job, { runDir });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('CHECK_FAILED');
    expect(record.stage).toBe('check:test');
    expect(record.retryable).toBe(true);
    expect(record.needsAttention).toBeUndefined();
    const log = readFileSync(record.details!.logPath as string, 'utf8');
    expect(log).toContain('1 test failed: greet returns hi');
    expect(readFileSync(join(runDir, 'checks/lint.log'), 'utf8')).toContain('lint ok');
    expect(existsSync(join(runDir, 'checks/build.log'))).toBe(false);
  });

  it('ends a hanging check at its timeout', async () => {
    using sb = sandbox();
    const script = sb.script([writeGreeting]);
    const job = parseJob(sb.job({ kind: 'execute', checks: [{ name: 'hang', command: ['node', '-e', 'setInterval(() => {}, 1000)'], timeoutMs: 300 }] }, script));
    const record = await runPipeline(job, { runDir: sb.runDir('exec') });
    expect(record.type).toBe('error');
    expect((record as { message: string }).message).toMatch(/check hang timed out after 300 ms/);
  });

  it('refuses a change outside ownedFiles at the diff gate', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'src/greet.ts', content: 'x\n' } }, { write: { path: 'package.json', content: '{}\n' } }] }]);
    const job = parseJob(sb.job({ kind: 'execute', task: { title: 'Add greeting', complexity: 'medium', ownedFiles: ['src/'] } }, script));
    const record = await runPipeline(job, { runDir: sb.runDir('exec') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('DIFF_GATE');
    expect(record.needsAttention).toMatchObject({ reason: 'diff_gate', details: { outsideOwned: ['package.json'], filesChanged: 2 } });
  });

  it('refuses a diff past the line limit', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'big.txt', content: 'line\n'.repeat(30) } }] }]);
    const job = parseJob(sb.job({ kind: 'execute', limits: { maxDiffLines: 10 } }, script));
    const record = await runPipeline(job, { runDir: sb.runDir('exec') });
    expect((record as { message: string }).message).toMatch(/30 lines changed \(limit 10\)/);
  });

  it('refuses a file added past maxFileBytes, binary or not (a binary counts no lines), naming it and its size', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'dump.bin', content: '\u0000\u0001'.repeat(2500) } }, { write: { path: 'ok.txt', content: 'small\n' } }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute', limits: { maxFileBytes: 1000 } }, script)), { runDir: sb.runDir('exec') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('DIFF_GATE');
    expect(record.message).toContain('1 file(s) larger than limits.maxFileBytes (1000 bytes), left uncommitted in the worktree: dump.bin (5000 bytes)');
    expect(record.needsAttention).toMatchObject({ reason: 'diff_gate', details: { largeFiles: [{ path: 'dump.bin', bytes: 5000 }] } });
  });

  it('refuses a file past maxFileBytes before git reads it: a sparse file an agent makes for nothing is never hashed', async () => {
    // `truncate -s` writes no byte, and `git add -A` read and deflated all of them (4 GB: 34 s of the worker's CPU,
    // and a loose object in the repository's own .git). 2 GiB here: about 15 s of git's time without the check.
    using sb = sandbox();
    const base = sb.git('rev-parse', 'main');
    const agent = { kind: 'command', command: ['sh', '-c', 'cat >/dev/null; truncate -s 2G big.bin; echo small > ok.txt; echo done'] };
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute', provider: agent, limits: { maxFileBytes: 1000 } } as never, '')), { runDir: sb.runDir('exec') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('DIFF_GATE');
    expect(record.message).toContain(`1 file(s) larger than limits.maxFileBytes (1000 bytes), left uncommitted in the worktree: big.bin (${2 ** 31} bytes)`);
    expect(record.needsAttention).toMatchObject({ reason: 'diff_gate', details: { largeFiles: [{ path: 'big.bin', bytes: 2 ** 31 }], limits: { maxFileBytes: 1000 } } });
    // Nothing committed: the branch is where it started, and the file is in the worktree for the person to delete.
    const wt = join(sb.worktrees, 'T1-v1');
    expect(sb.git('rev-parse', 'maestro/T1-v1')).toBe(base);
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: wt, encoding: 'utf8' })).toBe('?? big.bin\n?? ok.txt\n');
    expect(record.message).toContain(`In the worktree (${wt}), delete it`);
    // A retry with the file still there is refused as soon as it would be set aside (a commit too), unread again.
    const small = { kind: 'command', command: ['sh', '-c', 'cat >/dev/null; echo more > ok.txt'] };
    const again = await runPipeline(parseJob(sb.job({ kind: 'execute', provider: small, limits: { maxFileBytes: 1000 } } as never, '', 'r2')), { runDir: sb.runDir('r2') });
    expect(again).toMatchObject({ type: 'error', code: 'DIFF_GATE', needsAttention: { details: { largeFiles: [{ path: 'big.bin', bytes: 2 ** 31 }] } } });
    expect(sb.git('for-each-ref', 'refs/maestro/set-aside/')).toBe('');
    // Deleted, as the refusal says: the next run sets aside what is left and commits its own work.
    rmSync(join(wt, 'big.bin'));
    const done = await runPipeline(parseJob(sb.job({ kind: 'execute', provider: small, limits: { maxFileBytes: 1000 } } as never, '', 'r3')), { runDir: sb.runDir('r3') });
    expect(done.type, JSON.stringify(done)).toBe('result');
    expect(sb.git('show', 'maestro/T1-v1:ok.txt')).toBe('more');
  });

  it('lets a change edit a file that was already past maxFileBytes on main (a big lockfile is not its doing)', async () => {
    using sb = sandbox();
    sb.commitFile('package-lock.json', `${'{"a": 1}\n'.repeat(300)}`);
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'package-lock.json', content: `${'{"a": 2}\n'.repeat(300)}` } }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute', limits: { maxFileBytes: 1000, maxDiffLines: 1000 } }, script)), { runDir: sb.runDir('exec') });
    expect(record.type, JSON.stringify(record)).toBe('result');
  });

  it('brings new main commits into an existing task branch before the agent runs', async () => {
    using sb = sandbox();
    const script = sb.script([
      { match: { role: 'execute' }, times: 1, actions: [{ write: { path: 'a.txt', content: 'a\n' } }] },
      { match: { role: 'execute' }, actions: [{ write: { path: 'b.txt', content: 'b\n' } }] },
    ]);
    await runPipeline(parseJob(sb.job({ kind: 'execute' }, script, 'r1')), { runDir: sb.runDir('r1') });
    sb.commitFile('main.txt', 'from main\n');
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute' }, script, 'r2')), { runDir: sb.runDir('r2') });
    expect(record.type).toBe('result');
    const data = (record as { data: Record<string, any> }).data;
    expect(data.divergence).toEqual({ commits: 1, files: 1 });
    expect(readFileSync(join(data.worktreePath, 'main.txt'), 'utf8')).toBe('from main\n');
    // Only the task's own files count in its diff.
    expect(data.diff.files.sort()).toEqual(['a.txt', 'b.txt']);
  });


  it('sets aside what an earlier killed run left in the worktree (uncommitted files, a dead git\'s index lock), and starts from the branch', async () => {
    using sb = sandbox();
    const script = sb.script([
      { match: { role: 'execute' }, times: 1, actions: [{ write: { path: 'a.txt', content: 'a\n' } }] },
      { match: { role: 'execute' }, actions: [{ write: { path: 'b.txt', content: 'b\n' } }] },
    ]);
    const first = await runPipeline(parseJob(sb.job({ kind: 'execute' }, script, 'r1')), { runDir: sb.runDir('r1') });
    const wt = resultData<{ worktreePath: string }>(first).worktreePath;
    // A run killed between writing and committing (its claim taken back): a staged file, an edit, a new file.
    writeFileSync(join(wt, 'half.txt'), 'half\n');
    execFileSync('git', ['add', 'half.txt'], { cwd: wt });
    writeFileSync(join(wt, 'a.txt'), 'a, changed by the killed run\n');
    writeFileSync(join(wt, 'stray.txt'), 'stray\n');
    // Killed in the middle of `git add`, its git left the index locked; a minute ago.
    const lock = join(sb.repo, '.git', 'worktrees', 'T1-v1', 'index.lock');
    writeFileSync(lock, '');
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    sb.commitFile('main.txt', 'from main\n');

    const runDir = sb.runDir('r2');
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute' }, script, 'r2')), { runDir });
    const data = resultData<{ diff: { files: string[] }; setAside?: string[] }>(record);
    expect(data.diff.files.sort()).toEqual(['a.txt', 'b.txt']);
    expect(readFileSync(join(wt, 'a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(join(wt, 'half.txt'))).toBe(false);
    expect(readFileSync(join(wt, 'main.txt'), 'utf8')).toBe('from main\n');
    // Nothing is deleted: the leftovers are kept under a ref the run names, with how to bring them back.
    const phase = readOutbox(runDir).records.find((r) => r.type === 'phase' && r.stage === 'set-aside');
    expect(phase).toMatchObject({ state: 'done', detail: { files: ['a.txt', 'half.txt', 'stray.txt'] } });
    const { ref, restore } = (phase as unknown as { detail: { ref: string; restore: string } }).detail;
    expect(restore).toBe(`git stash apply ${ref}`);
    expect(sb.git('log', '-1', '--format=%s', ref)).toContain('left uncommitted by an earlier run of T1; set aside by run r2');
    expect(sb.git('show', `${ref}:stray.txt`)).toBe('stray');
    expect(sb.git('show', `${ref}:a.txt`)).toBe('a, changed by the killed run');
    expect(sb.git('stash', 'list')).toBe('');
    expect(existsSync(lock)).toBe(false);
  });
  it('sends the task to needs_attention when main diverged past the threshold', async () => {
    using sb = sandbox();
    const script = sb.script([writeGreeting]);
    await runPipeline(parseJob(sb.job({ kind: 'execute' }, script, 'r1')), { runDir: sb.runDir('r1') });
    for (let i = 0; i < 3; i++) sb.commitFile(`m${i}.txt`, `${i}\n`);
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute', limits: { divergenceCommits: 2 } }, script, 'r2')), { runDir: sb.runDir('r2') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.needsAttention).toMatchObject({ reason: 'divergence', details: { commits: 3, files: 3 } });
    expect(record.message).toMatch(/main moved 3 commit\(s\) and 3 file\(s\)/);
  });

  it('after two failed tries, reflects first and puts the reflection into the prompt', async () => {
    using sb = sandbox();
    const script = sb.script([
      { match: { role: 'reflect' }, actions: [{ text: 'The import path was wrong; use ./greet.js.' }] },
      { match: { role: 'execute', prompt: 'use ./greet.js' }, actions: [{ write: { path: 'fixed.txt', content: 'ok\n' } }] },
    ]);
    const job = parseJob(sb.job({ kind: 'execute', previousFailures: [{ error: 'check test failed', log: 'Cannot find module ./greet' }, { error: 'check test failed', log: 'Cannot find module ./greet' }] }, script));
    const runDir = sb.runDir('exec');
    const record = await runPipeline(job, { runDir });
    expect(record.type, JSON.stringify(record)).toBe('result');
    expect(resultData<{ reflection: string }>(record).reflection).toContain('use ./greet.js');
    const stages = readOutbox(runDir).records.filter((r) => r.type === 'phase' && r.state === 'done').map((r) => (r as { stage: string }).stage);
    expect(stages.indexOf('reflect')).toBeLessThan(stages.indexOf('agent'));
  });

  it('keeps the end of a reflection, up to its limit, in the prompt and the result', async () => {
    using sb = sandbox();
    const long = `${'padding '.repeat(5_000)}In short: use ./greet.js.`;
    const script = sb.script([
      { match: { role: 'reflect' }, actions: [{ text: long }] },
      { match: { role: 'execute', prompt: 'In short: use ./greet.js.' }, actions: [{ write: { path: 'fixed.txt', content: 'ok\n' } }] },
    ]);
    const job = parseJob(sb.job({ kind: 'execute', previousFailures: [{ error: 'check test failed', log: 'x' }, { error: 'check test failed', log: 'x' }] }, script));
    const record = await runPipeline(job, { runDir: sb.runDir('exec') });
    expect(record.type, JSON.stringify(record)).toBe('result');
    expect(resultData<{ reflection: string }>(record).reflection).toBe(long.slice(-MAX_REFLECTION_CHARS));
  });

  it('falls back to the weaker model once when the agent fails, then needs attention', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, failTimes: 1, failMessage: 'model overloaded', actions: [{ write: { path: 'x.txt', content: 'x\n' } }] }]);
    const ok = await runPipeline(parseJob(sb.job({ kind: 'execute', model: { tier: 'hard' } }, script, 'r1')), { runDir: sb.runDir('r1') });
    expect(ok.type).toBe('result');
    expect(ok.usage.models).toEqual(['opus', 'sonnet']);

    const always = sb.script([{ match: { role: 'execute' }, actions: [{ fail: 'segfault' }] }]);
    const bad = await runPipeline(parseJob({ ...sb.job({ kind: 'execute', model: { tier: 'hard' } }, always, 'r2'), taskId: 'T2' }), { runDir: sb.runDir('r2') });
    expect(bad.type).toBe('error');
    if (bad.type !== 'error') return;
    expect(bad.needsAttention?.reason).toBe('agent_failed');
    expect(bad.message).toContain('segfault');
    expect(bad.usage.agentCalls).toBe(2);
  });

  it('turns a hanging agent into an agent_timeout error record', async () => {
    using sb = sandbox();
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ hang: true }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute', limits: { agentTimeoutMs: 200 } }, script)), { runDir: sb.runDir('exec') });
    expect(record.type).toBe('error');
    if (record.type !== 'error') return;
    expect(record.code).toBe('AGENT_TIMEOUT');
    expect(record.needsAttention?.reason).toBe('agent_timeout');
  });

  it('takes model tiers and limits from the project .maestro/config.yaml, under the job', async () => {
    using sb = sandbox();
    sb.commitFile('.maestro/config.yaml', 'models:\n  medium: team-medium\nlimits:\n  maxDiffFiles: 1\n');
    const script = sb.script([{ match: { role: 'execute' }, actions: [{ write: { path: 'a.txt', content: 'a\n' } }, { write: { path: 'b.txt', content: 'b\n' } }] }]);
    const record = await runPipeline(parseJob(sb.job({ kind: 'execute' }, script)), { runDir: sb.runDir('r1') });
    expect(record.usage.models).toEqual(['team-medium']);
    expect((record as { message: string }).message).toMatch(/2 files changed \(limit 1\)/);
    const override = await runPipeline(parseJob({ ...sb.job({ kind: 'execute', limits: { maxDiffFiles: 5 } }, script, 'r2'), taskId: 'T2' }), { runDir: sb.runDir('r2') });
    expect(override.type).toBe('result');
  });
});
