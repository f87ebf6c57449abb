/**
 * The knowledge commands that name a session take a task's id for the task's session: a task's session id is a
 * folder name (`task-t-…`, knowledge/lifecycle/bridge.ts sessionIdFor) that no other command prints, and the task's
 * id (`t_…`), or its folder as the README wrote it (`task-t_…`), was refused as not matching ^[a-z0-9]… (a trial:
 * the first hour with the CLI found no way from a task to its candidates).
 */
import { describe, expect, it } from 'vitest';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { budget } from '../helpers/budget.js';
import { maestro, project } from '../helpers/knowledge2.js';

describe("a task's id names its knowledge session", { timeout: budget(120_000) }, () => {
  it('knowledge review, promote and session show|seal take t_… and task-t_…; a session id still works', async () => {
    const p = project();
    const taskId = 't_042afc50693fda79';
    const sid = sessionIdFor(taskId);
    expect(sid).toBe('task-t-042afc50693fda79');
    createSession(p.root, sid, 'Add sub');
    const c = stage(p.root, { target: 'spec', title: 'Use strict equality in tests', content: 'Tests compare with strictEqual.', category: 'coding', session: sid, evidence: [] }, process.env).candidate;
    const W = ['--workflow-root', p.dir];

    for (const named of [taskId, `task-${taskId}`, sid]) {
      const review = await maestro(['knowledge', 'review', named, ...W]);
      expect(review.code, named).toBe(0);
      // No daemon runs here: whether a person replaced the task's version is the task store's to say, and not said.
      expect(review.stderr, named).toMatch(new RegExp(`^maestro: whether task session ${sid} holds a replaced version of its task is not known here; the daemon did not answer: .+\\n$`));
      expect(review.stdout.split('\n')[0]).toBe(`session ${sid}`);
      expect(review.stdout).toContain(`${c.candidate_id} [pending] spec/propose (coding) "Use strict equality in tests"`);
      const shown = await maestro(['session', 'show', named, ...W]);
      expect([shown.code, shown.stdout], named).toEqual([0, `session ${sid}: open\n`]);
    }
    expect((await maestro(['knowledge', 'review', taskId, '--refresh', ...W])).code).toBe(0);
    const promoted = await maestro(['knowledge', 'promote', taskId, '--candidate', c.candidate_id, ...W]);
    expect([promoted.code, promoted.stderr]).toEqual([0, '']);
    const [line, commit] = promoted.stdout.split('\n');
    expect(line).toMatch(new RegExp(`^\\S+ S-\\S+ from ${c.candidate_id}$`));
    // What a promote writes is not committed (the daemon commits a board's review; this CLI leaves it to the person).
    expect(commit).toBe(`Written to ${p.root.workflowDir}, not committed: commit the new files there (git -C ${p.root.projectDir} status lists them) for the team and later agents to share them; Maestro merges a task only into a clean checkout, so commit them before you approve one.`);
    const sealed = await maestro(['session', 'seal', taskId, ...W]);
    expect([sealed.code, sealed.stdout.split(';')[0]]).toEqual([0, `session ${sid} completed`]);
    // A task's id in a folder that is not its project's: where its session is, not "maestro session create".
    const elsewhere = project();
    const lost = await maestro(['knowledge', 'review', 't_0123456789abcdef', '--workflow-root', elsewhere.dir]);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toContain(`No session task-t-0123456789abcdef under ${elsewhere.root.workflowDir}/sessions (a task's session is in its project's repository, made when its first run starts: run this there, or pass --workflow-root <the project's folder> (maestro task show t_0123456789abcdef names the command with it)). [UNKNOWN_SESSION]`);
    expect(lost.stderr).not.toContain('session create');
    // Not a task's id, not a session id: refused as before, naming the form.
    expect((await maestro(['knowledge', 'review', 'T_X!', ...W])).stderr).toContain('must match ^[a-z0-9]');
  });
});
