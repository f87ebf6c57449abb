/**
 * An agent that leaves its task's branch. Agents run commands as the user, and a real one may
 * `git checkout -b`, `git switch` to another branch or detach HEAD in its worktree. The run
 * used to commit whatever the agent wrote on whatever HEAD was then, so a person's branch got
 * a commit nobody reviewed and the task's branch, the one that is merged, did not. Now nothing
 * is committed off the branch: the run stops saying where HEAD went, and the next run puts the
 * worktree back on the task's branch, setting aside what the agent left.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { runPipeline } from '../../src/executor/run.js';
import { resultData, sandbox, type Sandbox } from './helpers.js';

/** A command agent: on its first execute call it runs `move` (git arguments), then writes a file; later calls only write. */
function agent(sb: Sandbox, move: string[], role = 'execute'): string[] {
  const path = join(sb.root, 'agent.mjs');
  writeFileSync(path, `
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
readFileSync(0, 'utf8');
const marker = ${JSON.stringify(join(sb.root, 'moved'))};
if (process.env.MAESTRO_ROLE === ${JSON.stringify(role)} && !existsSync(marker)) {
  writeFileSync(marker, '');
  execFileSync('git', ${JSON.stringify(move)}, { stdio: 'ignore' });
}
if (process.env.MAESTRO_ROLE === 'execute') writeFileSync(existsSync('work.txt') ? 'more.txt' : 'work.txt', 'work\\n');
process.stdout.write(process.env.MAESTRO_ROLE.startsWith('review') ? '\`\`\`json\\n{"verdict":"approve","findings":[]}\\n\`\`\`\\n' : 'done\\n');
`);
  return [process.execPath, path];
}

const messageOf = (record: { type: string }) => (record as { message?: string }).message ?? '';

const jobFor = (sb: Sandbox, command: string[], runId: string, kind: 'execute' | 'review' = 'execute') =>
  parseJob(sb.job({ kind, provider: { kind: 'command', command } } as never, '', runId));

describe('an agent that leaves its task branch', () => {
  it('commits nothing on the branch it switched to, says where HEAD went, and the next run goes back to the task branch', async () => {
    using sb = sandbox();
    sb.git('branch', 'feature');
    const featureBefore = sb.git('rev-parse', 'feature');
    const command = agent(sb, ['checkout', '-q', 'feature']);

    const first = await runPipeline(jobFor(sb, command, 'r1'), { runDir: sb.runDir('r1') });
    expect(first).toMatchObject({ type: 'error', code: 'LEFT_BRANCH', needsAttention: { reason: 'left_branch' } });
    const message = messageOf(first);
    expect(message).toContain('maestro/T1-v1');
    expect(message).toContain('feature');
    expect(message).toContain('maestro task retry T1');
    // The person's branch got no commit; the task's branch has nothing of the agent's either.
    expect(sb.git('rev-parse', 'feature')).toBe(featureBefore);
    expect(sb.git('rev-parse', 'maestro/T1-v1')).toBe(sb.git('rev-parse', 'main'));

    const runDir = sb.runDir('r2');
    const second = await runPipeline(jobFor(sb, command, 'r2'), { runDir });
    const data = resultData<{ branch: string; commitSha: string; worktreePath: string; diff: { files: string[] } }>(second);
    expect(data.branch).toBe('maestro/T1-v1');
    expect(sb.git('rev-parse', 'maestro/T1-v1')).toBe(data.commitSha);
    expect(execFileSync('git', ['symbolic-ref', '--short', 'HEAD'], { cwd: data.worktreePath, encoding: 'utf8' }).trim()).toBe('maestro/T1-v1');
    expect(data.diff.files).toEqual(['work.txt']);
    expect(sb.git('rev-parse', 'feature')).toBe(featureBefore);
    // What the first run left uncommitted is set aside, named, not lost.
    const phases = readOutbox(runDir).records.filter((r) => r.type === 'phase');
    expect(phases.find((p) => p.stage === 'set-aside')).toMatchObject({ detail: { files: ['work.txt'] } });
    expect(phases.find((p) => p.stage === 'back-on-branch')).toMatchObject({ detail: { branch: 'maestro/T1-v1', was: 'feature' } });
  });

  it('says HEAD is detached, with the commit, when the agent detached it', async () => {
    using sb = sandbox();
    const command = agent(sb, ['checkout', '-q', '--detach']);
    const record = await runPipeline(jobFor(sb, command, 'r1'), { runDir: sb.runDir('r1') });
    expect(record).toMatchObject({ type: 'error', code: 'LEFT_BRANCH', needsAttention: { reason: 'left_branch' } });
    expect(messageOf(record)).toMatch(/detached at [0-9a-f]{7,}/);
    expect(sb.git('rev-parse', 'maestro/T1-v1')).toBe(sb.git('rev-parse', 'main'));
  });

  it('refuses a review whose agent moved the worktree: its verdict is about other code', async () => {
    using sb = sandbox();
    sb.git('branch', 'feature');
    const command = agent(sb, ['checkout', '-q', 'feature'], 'review:code');
    resultData(await runPipeline(jobFor(sb, command, 'e1'), { runDir: sb.runDir('e1') }));
    const record = await runPipeline(jobFor(sb, command, 'v1', 'review'), { runDir: sb.runDir('v1') });
    expect(record).toMatchObject({ type: 'error', code: 'LEFT_BRANCH', needsAttention: { reason: 'left_branch' } });
    expect(messageOf(record)).toContain('feature');
  });

  it('refuses a review whose agent committed on the task branch: what would merge is not what was reviewed', async () => {
    using sb = sandbox();
    const command = agent(sb, ['-c', 'user.name=r', '-c', 'user.email=r@r', 'commit', '-q', '--allow-empty', '-m', 'by the reviewer'], 'review:security');
    const executed = resultData<{ commitSha: string }>(await runPipeline(jobFor(sb, command, 'e1'), { runDir: sb.runDir('e1') }));
    const record = await runPipeline(jobFor(sb, command, 'v1', 'review'), { runDir: sb.runDir('v1') });
    expect(record).toMatchObject({ type: 'error', code: 'BRANCH_MOVED', needsAttention: { reason: 'branch_moved' } });
    expect(messageOf(record)).toContain(`from ${executed.commitSha.slice(0, 12)}`);
  });
});
