/**
 * An agent that makes a git repository inside its worktree: `git init`, `git clone`, or a scaffolder that runs
 * `git init` and commits (create-react-app, cargo new, …). `git add -A` records such a folder as a gitlink, one
 * line, "Subproject commit <sha>", instead of its files: the diff gate counted one file and let it through, the
 * person saw that one line, and main got a pointer to a commit that exists only in that folder, which is deleted
 * with the worktree after the merge. The agent's files in it were never in any commit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/executor/protocol/job.js';
import { runPipeline } from '../../src/executor/run.js';
import { resultData, sandbox, type Sandbox } from './helpers.js';

/** A command agent whose execute call runs `script` in the worktree (sh). */
function shellAgent(sb: Sandbox, script: string): string[] {
  const path = join(sb.root, 'agent.sh');
  writeFileSync(path, `cat >/dev/null
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
if [ "$MAESTRO_ROLE" = execute ]; then ${script}; fi
echo done
`);
  return ['/bin/sh', path];
}

const jobFor = (sb: Sandbox, command: string[]) =>
  parseJob(sb.job({ kind: 'execute', provider: { kind: 'command', command }, task: { title: 'Scaffold the web app', complexity: 'medium', ownedFiles: [] } } as never, '', 'e1'));

describe('a git repository the agent made inside its worktree', () => {
  it('is refused at the diff gate, naming the folder: its files are not in the change', async () => {
    using sb = sandbox();
    const command = shellAgent(sb, 'mkdir web && cd web && git init -q && echo app > app.js && git add . && git commit -qm scaffold && echo more >> app.js');
    const record = await runPipeline(jobFor(sb, command), { runDir: sb.runDir('e1') });
    // Refused before the commit: nothing is on the branch (the board and `task show` say so, api/routes/diffGateRefusal.ts).
    expect(record).toMatchObject({ type: 'error', code: 'DIFF_GATE', needsAttention: { reason: 'diff_gate', details: { strayGitlinks: ['web'], committed: false } } });
    expect((record as { message?: string }).message).toContain('web/.git');
  });

  it('is refused even when declared in .gitmodules: git would go into it and run what its settings name', async () => {
    using sb = sandbox();
    const command = shellAgent(sb, 'mkdir web && cd web && git init -q && echo app > app.js && git add . && git commit -qm scaffold && cd .. && git config -f .gitmodules submodule.web.path web && git config -f .gitmodules submodule.web.url https://example.com/web.git');
    const record = await runPipeline(jobFor(sb, command), { runDir: sb.runDir('e1') });
    expect(record).toMatchObject({ type: 'error', code: 'DIFF_GATE', needsAttention: { details: { strayGitlinks: ['web'] } } });
  });

  /**
   * The agent's repository names a command in its settings (core.fsmonitor, a clean filter). Git runs it from
   * inside `status`, `add -A` or `commit` over the worktree: outside the agent's sandbox, where the daemon's home
   * is. An audit read the daemon's token that way. The command here writes a file outside the worktree.
   */
  it("never runs a command its settings name, in this run or the next one on the same worktree", async () => {
    using sb = sandbox();
    const ran = join(sb.root, 'ran-outside');
    // A gitlink main already has (a repository someone once committed by mistake): the worktree has an empty
    // folder there, and git looks into whatever repository appears in it.
    const sha = sb.git('rev-parse', 'HEAD');
    sb.git('update-index', '--add', '--cacheinfo', `160000,${sha},lib`);
    sb.git('commit', '-q', '-m', 'a stray gitlink');
    const arm = (dir: string) => `git -C ${dir} config core.fsmonitor "echo fsmonitor >> ${ran}; false" && echo "* filter=evil" > "$(git -C ${dir} rev-parse --git-dir)/info/attributes" && git -C ${dir} config filter.evil.clean "echo filter >> ${ran}; cat"`;
    // One repository in the gitlink's folder, and one reached through a `.git` file naming a folder the agent wrote.
    const script = `git -C lib init -q && echo a > lib/a.js && git -C lib add . && git -C lib commit -qm l && ${arm('lib')} && echo b >> lib/a.js
      printf '/hidden/\\n' > .gitignore && mkdir hidden && git init -q --separate-git-dir="$PWD/hidden/x.git" vendor/x && echo c > vendor/x/c.js && ${arm('vendor/x')}`;
    const job = jobFor(sb, shellAgent(sb, script));
    const first = await runPipeline(job, { runDir: sb.runDir('e1') });
    expect(first).toMatchObject({ type: 'error', code: 'DIFF_GATE', needsAttention: { details: { strayGitlinks: expect.arrayContaining(['lib', 'vendor/x']) } } });
    // The next run on the same worktree sets aside what was left (git status, add -A, stash) before its agent runs.
    await runPipeline(parseJob({ ...job, runId: 'e2' }), { runDir: sb.runDir('e2') });
    expect(existsSync(ran) ? readFileSync(ran, 'utf8') : 'nothing ran').toBe('nothing ran');
  });

  it('leaves alone a submodule git populated, whose .git names a folder in the repository\'s own git folder', async () => {
    using sb = sandbox();
    const lib = join(sb.root, 'lib-origin');
    execFileSync('sh', ['-c', `git init -q -b main ${lib} && echo l > ${lib}/l.txt && git -C ${lib} add . && git -C ${lib} -c user.name=t -c user.email=t@t commit -qm l`]);
    sb.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
    sb.git('commit', '-q', '-m', 'lib as a submodule');
    const command = shellAgent(sb, 'git -c protocol.file.allow=always submodule update -q --init && echo app > app.js');
    const data = resultData<{ diff: { files: string[] } }>(await runPipeline(jobFor(sb, command), { runDir: sb.runDir('e1') }));
    expect(data.diff.files).toEqual(['app.js']);
  });
});
