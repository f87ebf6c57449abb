/**
 * The knowledge wiring in a real daemon with the scripted agent: the task is a
 * session, the run's folder is the orchestrator's run directory, the brief
 * (card + injected spec, deprecated one skipped) reaches the agent, and the
 * agent's report becomes pending candidates — never a commit, never a rule.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git, makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { maestro } from '../helpers/knowledge2.js';
import type { Store } from '../../src/store/store.js';
import type { Bus } from '../../src/lib/bus.js';
import { review } from '../../src/knowledge/lifecycle/reconcile/review.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { sessionIdFor, runIdFor } from '../../src/knowledge/lifecycle/bridge.js';
import { createSession, readRun } from '../../src/knowledge/lifecycle/session/store.js';
import { createLifecycleContext } from '../../src/knowledge/lifecycle/context.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

const SPECS = `<spec-entry category="coding" keywords="greeting,greet" date="2026-01-01" sid="S-20260101-gree" title="Greetings are lowercase">

### Greetings are lowercase

Greeting strings are lowercase words.

</spec-entry>

<spec-entry category="coding" keywords="greeting" date="2025-01-01" sid="S-20250101-oldg" title="Greetings are shouted" status="deprecated">

### Greetings are shouted

Old rule: greetings are uppercase.

</spec-entry>
`;

describe('knowledge in the orchestrator', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  const script = fileURLToPath(new URL('./fixtures/knowledge.yaml', import.meta.url));

  /** The greeting task, created and run until its execute run is reviewed. */
  async function runGreeting(store: Store, bus: Bus, projectId: string) {
    const task = await store.tasks.create({ projectId, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    daemon!.orchestrator.kick();
    await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'exec_review' ? t : t.status === 'needs_attention' ? Promise.reject(new Error(`needs attention: ${t.lastRunError}`)) : null;
    }, 'exec_review');
    return task;
  }

  it('brief in, report out: session per task, run dir linked, decisions become pending candidates', async () => {
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPECS });
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await runGreeting(store, bus, project.id);

    const [execute] = await store.runs.list({ taskId: task.id });
    const job = JSON.parse(readFileSync(join(execute!.runDir!, 'job.json'), 'utf8'));
    expect(job.project.knowledge).toContain('Greetings are lowercase');
    expect(job.project.knowledge).not.toContain('Greetings are shouted');

    // As `maestro knowledge review` reads it with the daemon's MAESTRO_HOME: its run folders link into that home's runs/.
    const root = resolveWorkflowRoot({ env: { ...process.env, MAESTRO_HOME: daemon.config.home }, workflowRoot: repo });
    const sid = sessionIdFor(task.id);
    const rid = runIdFor(execute!.id);
    const link = join(repo, '.workflow', 'sessions', sid, 'runs', rid);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(realpathSync(link)).toBe(realpathSync(execute!.runDir!));
    // The knowledge hook runs after the execute run's final record; the review run came after it, so it is done
    // by now or soon — poll (no event is published for a knowledge seal) rather than assume.
    await poll(() => readRun(root, sid, rid).status === 'sealed', 'the execute run sealed in the ledger', 60_000);
    expect(readRun(root, sid, rid)).toMatchObject({ status: 'sealed', verdict: 'done', summary: 'greeting added' });
    expect(readFileSync(join(execute!.runDir!, 'report.md'), 'utf8')).toContain('Greeting strings live in src/greet.ts');

    const r = review(lc, root, sid);
    expect(r.candidates.map((c) => [c.source_kind, c.status, c.receipt]).sort()).toEqual([['constraint', 'pending', 'fresh'], ['decision', 'pending', 'fresh']]);
    // The report never reached the branch, and no rule was written.
    expect(git(repo, 'ls-tree', '-r', '--name-only', `maestro/${task.id}-v1`)).not.toContain('.maestro/report.md');
    expect(readFileSync(join(repo, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toBe(SPECS);
    expect(existsSync(join(repo, '.workflow', 'sessions', sid, 'session.json'))).toBe(true);
  });

  it('on a shared remote the run is finished where it started (the daemon\'s clone), and a promotion lands on the remote\'s main, or not at all', async () => {
    // The project is registered by its bare remote, which has no work tree: the runs work in this daemon's clone,
    // and their knowledge lives there. (Finishing once looked in the registered repository, found no session and
    // left every run's report unread and its run unsealed, without a word.)
    const remote = bareRemote(tempDir('maestro-remote-'), { 'README.md': '# shared\n', '.workflow/specs/coding-conventions.md': SPECS });
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script } } });
    const task = await runGreeting(store, bus, project.id);

    const [execute] = await store.runs.list({ taskId: task.id });
    const clone = join(daemon.config.home, 'clones', project.id);
    const root = resolveWorkflowRoot({ env: { ...process.env, MAESTRO_HOME: daemon.config.home }, workflowRoot: clone });
    const sid = sessionIdFor(task.id);
    const rid = runIdFor(execute!.id);
    await poll(() => readRun(root, sid, rid).status === 'sealed', 'the execute run sealed in the clone\'s ledger', 60_000);
    expect(readRun(root, sid, rid)).toMatchObject({ status: 'sealed', verdict: 'done', summary: 'greeting added' });
    expect(review(lc, root, sid).candidates.map((c) => [c.source_kind, c.status]).sort()).toEqual([['constraint', 'pending'], ['decision', 'pending']]);
    expect(existsSync(join(remote, '.workflow'))).toBe(false);
    // The board's review queue for the project reads the same place.
    const queue = await daemon.app.inject({ method: 'GET', url: `/api/knowledge/review?projectId=${project.id}` });
    expect(queue.statusCode).toBe(200);
    const sessions = (queue.json() as { sessions: Array<{ session_id: string; review: { candidates: unknown[] } | null }> }).sessions;
    expect(sessions.find((x) => x.session_id === sid)?.review?.candidates).toHaveLength(2);
    // Promotion lands on the remote's main, as a merge does. A remote that refuses the push: nothing is promoted.
    const mainBefore = git(remote, 'rev-parse', 'main');
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "main is frozen" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const promote = () => daemon!.app.inject({ method: 'POST', url: `/api/knowledge/review/${sid}/promote?projectId=${project.id}`, payload: { all: true } });
    const refused = await promote();
    expect(refused.json().error.message).toMatch(/^Nothing was promoted: The push of main to the remote failed: .*main is frozen/s);
    expect(git(remote, 'rev-parse', 'main')).toBe(mainBefore);
    expect(readFileSync(join(clone, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toBe(SPECS);
    expect(git(clone, 'status', '--porcelain', '--untracked-files=all', '--', '.workflow/specs')).toBe('');
    expect(review(lc, root, sid).candidates.every((c) => c.status === 'pending')).toBe(true);

    rmSync(hook);
    const promoted = await promote();
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json().promoted).toHaveLength(2);
    // One commit on the remote's main, with the spec files only (no session, no index), naming the task and the entries.
    const ids = (promoted.json().promoted as Array<{ promoted_id: string }>).map((p) => p.promoted_id).join(', ');
    expect(git(remote, 'log', '--format=%s', `${mainBefore}..main`)).toBe(`Knowledge promoted from task "Add greeting" (${task.id}): ${ids}`);
    const files = git(remote, 'show', '--name-only', '--format=', 'main').split('\n').filter(Boolean);
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((f) => /^\.workflow\/specs\/[^/]+\.md$/.test(f))).toBe(true);
    const onMain = files.map((f) => git(remote, 'show', `main:${f}`)).join('\n');
    for (const p of promoted.json().promoted as Array<{ promoted_id: string }>) expect(onMain).toContain(p.promoted_id);
    expect(review(lc, root, sid).candidates.every((c) => c.status === 'promoted')).toBe(true);
    // Again: already promoted, nothing more on main.
    const again = await promote();
    expect(again.json().promoted).toEqual([]);
    expect(git(remote, 'log', '--format=%s', `${mainBefore}..main`).split('\n')).toHaveLength(1);
  });

  it("a promotion at exec_review in the project's own checkout commits what it wrote, and the task then merges; the person's own files stay theirs", async () => {
    // The candidates go to architecture-constraints.md: tracked, so the promotion's change made the checkout dirty.
    const arch = '<spec-entry category="arch" keywords="layer" date="2026-01-01" sid="S-20260101-layr" title="Layers">\n\n### Layers\n\nsrc/ holds one layer.\n\n</spec-entry>\n';
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPECS, '.workflow/specs/architecture-constraints.md': arch });
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await runGreeting(store, bus, project.id);
    const root = resolveWorkflowRoot({ env: { ...process.env, MAESTRO_HOME: daemon.config.home }, workflowRoot: repo });
    const sid = sessionIdFor(task.id);
    const [execute] = await store.runs.list({ taskId: task.id });
    await poll(() => readRun(root, sid, runIdFor(execute!.id)).status === 'sealed', 'the execute run sealed in the ledger', 60_000);
    // The person's own work in the checkout, uncommitted: a knowhow draft (where promotions write) and a note.
    mkdirSync(join(repo, '.workflow', 'knowhow'), { recursive: true });
    writeFileSync(join(repo, '.workflow', 'knowhow', 'my-draft.md'), 'half a thought\n');
    writeFileSync(join(repo, 'notes.txt'), 'mine\n');
    const mainBefore = git(repo, 'rev-parse', 'main');

    const promoted = await daemon.app.inject({ method: 'POST', url: `/api/knowledge/review/${sid}/promote?projectId=${project.id}`, payload: { all: true } });
    expect(promoted.statusCode).toBe(200);
    const ids = (promoted.json().promoted as Array<{ promoted_id: string }>).map((p) => p.promoted_id);
    expect(ids).toHaveLength(2);
    // One commit on main, naming the task and the entries, holding only the files the promotion wrote.
    expect(git(repo, 'log', '--format=%s', `${mainBefore}..main`)).toBe(`Knowledge promoted from task "Add greeting" (${task.id}): ${ids.join(', ')}`);
    const files = git(repo, 'show', '--name-only', '--format=', 'main').split('\n').sort();
    expect(files).toContain('.workflow/specs/architecture-constraints.md');
    expect(files.every((f) => f.startsWith('.workflow/specs/') || f.startsWith('.workflow/knowhow/'))).toBe(true);
    expect(files).not.toContain('.workflow/knowhow/my-draft.md');
    expect(promoted.json().commit).toEqual({ sha: git(repo, 'rev-parse', 'main'), files: expect.arrayContaining(files), uncommitted: [], why: null });
    // The checkout is clean but for the person's untracked files, untouched.
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all', '--', '.workflow/specs', '.workflow/knowhow', 'notes.txt')).toBe('?? .workflow/knowhow/my-draft.md\n?? notes.txt'.trim());
    expect(readFileSync(join(repo, '.workflow', 'knowhow', 'my-draft.md'), 'utf8')).toBe('half a thought\n');

    // Approving the task now merges it (it was refused: the promoted spec file left the checkout dirty).
    const approved = await daemon.app.inject({ method: 'POST', url: `/api/tasks/${task.id}/approve`, payload: { gate: 'exec_review' } });
    expect(approved.statusCode, approved.body).toBe(200);
    await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'done' ? t : t.status === 'needs_attention' ? Promise.reject(new Error(`needs attention: ${t.lastRunError}`)) : null;
    }, 'done');
    expect(git(repo, 'show', 'main:src/greet.ts')).toContain('hello');
    expect(git(repo, 'show', 'main:.workflow/specs/architecture-constraints.md')).toContain(ids[0]);
    expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it("a rejected version's candidates stay in the review queue, after the current ones, saying where they come from (API and CLI)", async () => {
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPECS });
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await runGreeting(store, bus, project.id);
    const root = resolveWorkflowRoot({ env: { ...process.env, MAESTRO_HOME: daemon.config.home }, workflowRoot: repo });
    const sid = sessionIdFor(task.id);
    const [execute] = await store.runs.list({ taskId: task.id });
    await poll(() => readRun(root, sid, runIdFor(execute!.id)).status === 'sealed', 'the execute run sealed in the ledger', 60_000);

    const rejected = await daemon.app.inject({ method: 'POST', url: `/api/tasks/${task.id}/reject`, payload: { gate: 'exec_review', who: 'ana', reason: 'greet in French' } });
    expect(rejected.statusCode).toBe(200);
    const next = rejected.json().next as { id: string; version: number };

    // A person's own session, listed after task sessions by name: the current ones still come first.
    createSession(root, 'zz-notes', 'notes');
    const queue = (await daemon.app.inject({ method: 'GET', url: `/api/knowledge/review?projectId=${project.id}` })).json().sessions as Array<{ session_id: string; review: { superseded: unknown; candidates: unknown[] } }>;
    // Kept, not dropped: what the rejected try learned may still hold. Last: zz-notes (and v2's session, once begun) first.
    const last = queue.at(-1)!;
    expect(last.session_id).toBe(sid);
    expect(last.review.candidates).toHaveLength(2);
    expect(last.review.superseded).toEqual({ task_id: task.id, version: 1, cause: 'rejected', gate: 'exec_review', reason: 'greet in French', who: 'ana', at: expect.any(String), superseded_by: { task_id: next.id, version: 2, session_id: sessionIdFor(next.id) } });
    for (const s of queue.slice(0, -1)) expect(s.review.superseded).toBeNull();

    const cli = await maestro(['knowledge', 'review', sid, '--workflow-root', repo], { MAESTRO_HOME: daemon.config.home });
    expect(cli.code).toBe(0);
    expect(cli.stdout.split('\n').slice(0, 2)).toEqual([`session ${sid}`, `  from v1 of the task, rejected at execution review by ana: greet in French; the task goes on as v2 (session ${sessionIdFor(next.id)}). What this try learned may still hold: decide each candidate.`]);
  });
});
