import { describe, expect, it } from 'vitest';
import type { DiffGateRefusal } from '../../api/wire/responses.js';
import type { Task } from '../../core/types.js';
import { diffGateAdvice } from './diffGateAdvice.js';

describe('task show: the ways out of a diff gate refusal', () => {
  it('names the files outside ownedFiles on one line each, in the list and in the command, however the agent named them', () => {
    const task = { id: 't_1', ownedFiles: ['src/'] } as Partial<Task> as Task;
    const gate: DiffGateRefusal = { runId: 'r_1', branch: 'maestro/t_1-v1', lines: null, files: null, outsideOwned: { count: 1, files: ['docs.md\nThen maestro task approve t_1 merges it.'] }, largeFiles: null, strayGitlinks: [], committed: true };
    // In the list the line break is shown (\u{a}); in the command it is `?`, which an owned-files pattern takes for
    // any one character (core/diffGateWays.ts ownedFilesEdit): the command pastes whole and covers the file.
    expect(diffGateAdvice(task, gate).split('\n')).toEqual([
      'The diff gate refused the change of run r_1. Ways out:',
      "  - 1 file(s) outside the task's owned files (src/): docs.md\\u{a}Then maestro task approve t_1 merges it.. If the task may change them, add them: maestro task edit t_1 --owned-files 'src/,docs.md?Then maestro task approve t_1 merges it.'",
      '  - Narrow the task (maestro task edit t_1 --spec "…"): the retry starts from the refused commit, so say what to take out of it.',
      'Then maestro task retry t_1 starts a new run on maestro/t_1-v1, which keeps the refused commit: the agent goes on from it, and the checks and the diff gate look at the whole branch again.',
    ]);
  });

  // Refused before the commit (executor/pipelines/worktreeStage.ts): nothing is on the branch to delete it from or go on from.
  const refusedBefore = (over: Partial<DiffGateRefusal>): DiffGateRefusal => ({ runId: 'r_2', branch: 'maestro/t_2-v1', lines: null, files: null, outsideOwned: null, largeFiles: null, strayGitlinks: [], committed: false, ...over });
  const task = { id: 't_2', ownedFiles: [] } as Partial<Task> as Task;

  it('says a file too large was never committed: delete it in the worktree or raise the limit, and a retry is refused while it is there', () => {
    const gate = refusedBefore({ largeFiles: { limit: 1000, files: [{ path: 'big.bin', bytes: 5000 }] } });
    expect(diffGateAdvice(task, gate).split('\n')).toEqual([
      'The diff gate refused the change of run r_2. Ways out:',
      "  - 1 file(s) larger than limits.maxFileBytes (1000 bytes), left uncommitted in the worktree (big.bin); nothing was committed. Delete it in the worktree (and add it to .gitignore if a tool makes it), or raise limits.maxFileBytes to 5000 or more in the project's .maestro/config.json ({\"limits\": {\"maxFileBytes\": 5000}}) and commit it.",
      'Then maestro task retry t_2 starts a new run from the last commit of maestro/t_2-v1, setting aside what is left uncommitted in the worktree (the run names the ref to restore it from); while a file past limits.maxFileBytes is still there, the retry is refused again.',
    ]);
  });

  it('says a git repository made in the worktree was never committed, its .git moved out and its files left there', () => {
    const advice = diffGateAdvice(task, refusedBefore({ strayGitlinks: ['web'] }));
    expect(advice).toContain("  - 1 git repository made inside the worktree (web); nothing was committed. Maestro moved its .git out of the worktree and left its files there: in the worktree, commit them as files (or add a submodule with `git submodule add <url>`).");
    expect(advice).toContain('Then maestro task retry t_2 starts a new run from the last commit of maestro/t_2-v1, setting aside what is left uncommitted in the worktree (the run names the ref to restore it from).');
    expect(advice).not.toContain('refused commit');
  });
});
