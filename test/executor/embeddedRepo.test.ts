/**
 * An agent that makes a git repository inside its worktree: `git init`, `git clone`, or a scaffolder that runs
 * `git init` and commits (create-react-app, cargo new, …). `git add -A` records such a folder as a gitlink, one
 * line, "Subproject commit <sha>", instead of its files: the diff gate counted one file and let it through, the
 * person saw that one line, and main got a pointer to a commit that exists only in that folder, which is deleted
 * with the worktree after the merge. The agent's files in it were never in any commit.
 */
import { writeFileSync } from 'node:fs';
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
    expect(record).toMatchObject({ type: 'error', code: 'DIFF_GATE', needsAttention: { reason: 'diff_gate', details: { strayGitlinks: ['web'] } } });
    expect((record as { message?: string }).message).toContain('web/.git');
  });

  it('passes when it is a submodule declared in .gitmodules', async () => {
    using sb = sandbox();
    const command = shellAgent(sb, 'mkdir web && cd web && git init -q && echo app > app.js && git add . && git commit -qm scaffold && cd .. && git config -f .gitmodules submodule.web.path web && git config -f .gitmodules submodule.web.url https://example.com/web.git');
    const data = resultData<{ diff: { files: string[]; strayGitlinks: string[] } }>(await runPipeline(jobFor(sb, command), { runDir: sb.runDir('e1') }));
    expect(data.diff.files).toEqual(['.gitmodules', 'web']);
    expect(data.diff.strayGitlinks).toEqual([]);
  });
});
