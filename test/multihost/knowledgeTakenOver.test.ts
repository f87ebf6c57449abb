/**
 * The knowledge a task's execute proposed on a daemon that stopped, reviewed on the daemon that took the task over.
 * Two daemons on one PostgreSQL, the project on a shared remote: each works in its own clone, and a run's candidates
 * are staged in the session folder of the clone it ran in (never pushed). Daemon a executes (the scripted agent
 * accepts a decision in its report) and stops before the review; b takes the task over, reviews it and reaches the
 * gate. The ledger a stored in the database with the run is imported into b's session as b reaches the gate: b's
 * task show, its knowledge review (CLI and API) list the candidate, and b promotes it onto the remote's main. Looked at again, nothing is
 * imported twice and the promoted candidate stays promoted.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runIdFor, sessionIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { candidateId } from '../../src/knowledge/lifecycle/ledger/recipes.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { maestro } from '../helpers/knowledge2.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { git, sharedRemote } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { reportingScript } from '../helpers/reportScript.js';
import { cli, cleanEnv } from '../cli/helpers.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const DECISION = 'Greeting strings live in a.txt and nowhere else.';

const SCRIPT = reportingScript({ wait: 3000, writes: [{ path: 'a.txt', content: 'hello\n' }], summary: 'greeting added', decisions: [DECISION] });

type Review = { candidates: Array<{ candidate_id: string; status: string; content: string }> };

describe.skipIf(!pgAvailable())('knowledge of a task taken over at review', () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop({ graceMs: 0 });
    removeTempDirs();
  });

  it("the execute's candidate on the stopped daemon is reviewed and promoted on its taker", { timeout: budget(300_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const remote = sharedRemote(tempDir('maestro-takeover-'));
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const a = await startTestDaemon({ database: url, name: 'a', tickMs: 100 });
    daemons.push(a);
    // No auto-approval: the task waits at its gate for a person.
    const project = await a.store.projects.create({ name: 'p', repoPath: remote, config: { remote, provider: { kind: 'scripted', script } } });
    const task = await a.store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy', ownedFiles: ['a.txt'] });
    a.orchestrator.kick();
    await until(a.bus, async () => (await a.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), "a's execute in its agent stage", budget(120_000));
    // a stops mid-execute: the stage finishes in the grace period, the task is let go at review.
    daemons.splice(daemons.indexOf(a), 1);
    await a.stop({ graceMs: 60_000 });

    const b = await startTestDaemon({ database: url, name: 'b', tickMs: 100 });
    daemons.push(b);
    const [execute] = await b.store.runs.list({ taskId: task.id });
    expect(execute).toMatchObject({ kind: 'execute', owner: 'a', status: 'succeeded' });
    b.orchestrator.kick();
    await until(b.bus, async () => {
      const t = await b.store.tasks.get(task.id);
      if (t.status === 'needs_attention') throw new Error(`needs attention: ${t.lastRunError}`);
      return t.status === 'exec_review' ? t : null;
    }, 'the task at its gate on b', budget(120_000));
    expect((await b.store.runs.list({ taskId: task.id })).map((r) => [r.kind, r.owner])).toEqual([['execute', 'a'], ['review', 'b']]);

    // b reached the gate: it imported a's execute into its session by itself, before anyone looked.
    const sid = sessionIdFor(task.id);
    const cloneB = join(b.config.home, 'clones', project.id);
    const imported = join(cloneB, '.workflow', 'sessions', sid, 'runs', runIdFor(execute!.id), 'knowledge-delta.json');
    await poll(() => existsSync(imported), "a's execute imported into b's session at the gate", budget(60_000));

    // task show on b: the candidate is here to review, and nothing is said to be on a.
    const shown = await cli(['task', 'show', task.id, '--url', b.url], cleanEnv({ MAESTRO_HOME: b.config.home }));
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain("This task's runs staged 1 knowledge candidate (1 not decided yet)");
    expect(shown.stdout).not.toContain('not available here');
    const detail = (await b.app.inject({ method: 'GET', url: `/api/tasks/${task.id}` })).json() as { knowledgeElsewhere: unknown };
    expect(detail.knowledgeElsewhere).toEqual([]);

    // maestro knowledge review on b's host, in b's clone: the decision a's execute accepted, pending, from a's run.
    const id = candidateId('spec', DECISION);
    const reviewed = await maestro(['knowledge', 'review', task.id, '--workflow-root', cloneB, '--json'], { MAESTRO_HOME: b.config.home });
    expect(reviewed.stderr).toBe('');
    expect((JSON.parse(reviewed.stdout) as Review).candidates.map((c) => [c.candidate_id, c.status, c.content])).toEqual([[id, 'pending', DECISION]]);

    // The gate's review on b promotes it: onto the remote's main.
    const promoted = await b.app.inject({ method: 'POST', url: `/api/knowledge/review/${sid}/promote?projectId=${project.id}`, payload: { candidates: [id] } });
    expect(promoted.statusCode).toBe(200);
    expect((promoted.json() as { promoted: Array<{ candidate_id: string }> }).promoted.map((p) => p.candidate_id)).toEqual([id]);
    const files = git(remote, 'show', '--name-only', '--format=', 'main').split('\n').filter(Boolean);
    expect(files.map((f) => git(remote, 'show', `main:${f}`)).join('\n')).toContain(DECISION);

    // Looked at again (the detail and the review import at the gate): nothing comes twice, the decision stands.
    const ledger = readFileSync(imported, 'utf8');
    expect(JSON.parse(ledger).candidates.map((c: { candidate_id: string; status: string }) => [c.candidate_id, c.status])).toEqual([[id, 'promoted']]);
    await b.app.inject({ method: 'GET', url: `/api/tasks/${task.id}` });
    const again = (await b.app.inject({ method: 'GET', url: `/api/knowledge/review/${sid}?projectId=${project.id}` })).json() as Review;
    expect(again.candidates).toEqual([]);
    expect(readFileSync(imported, 'utf8')).toBe(ledger);
  });
});
