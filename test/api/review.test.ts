/**
 * The review routes (diff, checks, findings, version chain, gate-less approve
 * and reject with line comments) against a real daemon store and a real git
 * repository whose task branch adds, deletes, renames and changes binary files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';
import { makeTaskBranch, reviewRepo } from '../helpers/reviewRepo.js';
import { StageBook } from '../../src/executor/protocol/stages.js';

describe('review API', () => {
  let d: TestDaemon;
  let repo: string;
  beforeEach(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    repo = reviewRepo();
  });
  afterEach(async () => {
    await d.stop();
    removeTempDirs();
  });

  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    const res = await d.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  };
  const setup = async () => {
    const project = (await call('POST', '/api/projects', { name: 'r', repoPath: repo, config: { provider: { kind: 'scripted', script: join(repo, 'nonexistent.yaml') } } })).body.project;
    const task = (await call('POST', '/api/tasks', { projectId: project.id, title: 'Change things' })).body.task;
    return { project, task };
  };
  const toExecReview = async (id: string) => {
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(id, s);
  };

  it('shows the diff of a version: statuses, stats, hunks with line numbers, binary and large files', async () => {
    const { task } = await setup();
    const none = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe('NO_DIFF');
    expect(none.body.error.message).toMatch(/no branch yet/);

    makeTaskBranch(repo, task.id);
    const diff = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ taskId: task.id, version: 1, branch: `maestro/${task.id}-v1` });
    expect(diff.body.base).toBe(git(repo, 'rev-parse', 'main'));
    const byPath = Object.fromEntries(diff.body.files.map((f: { path: string }) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual(['added.ts', 'big.txt', 'gone.txt', 'logo.png', 'new-name.md', 'src.ts']);
    expect(byPath['added.ts']).toMatchObject({ status: 'added', additions: 2, deletions: 0, binary: false, collapsed: false });
    expect(byPath['gone.txt']).toMatchObject({ status: 'deleted', deletions: 1 });
    expect(byPath['new-name.md']).toMatchObject({ status: 'renamed', oldPath: 'old-name.md', additions: 1, deletions: 0 });
    expect(byPath['logo.png']).toMatchObject({ status: 'added', binary: true, hunks: [] });
    expect(byPath['big.txt']).toMatchObject({ collapsed: true, additions: 2500, hunks: [] });
    const src = byPath['src.ts'];
    expect(src.hunks).toHaveLength(1);
    expect(src.hunks[0].lines).toEqual([
      { kind: 'context', text: 'const a = 1;', oldLine: 1, newLine: 1 },
      { kind: 'del', text: 'const b = 2;', oldLine: 2, newLine: null },
      { kind: 'add', text: 'const b = 3;', oldLine: null, newLine: 2 },
      { kind: 'context', text: 'const c = 3;', oldLine: 3, newLine: 3 },
    ]);
    expect(diff.body.totals).toEqual({ files: 6, additions: 2 + 1 + 1 + 2500, deletions: 1 + 1 });

    const whole = await call('GET', `/api/tasks/${task.id}/diff?file=big.txt`);
    expect(whole.body.files).toHaveLength(1);
    expect(whole.body.files[0]).toMatchObject({ path: 'big.txt', collapsed: false });
    expect(whole.body.files[0].hunks[0].lines).toHaveLength(2500);
    for (const odd of ['../../etc/passwd', '-p', ':(glob)*', '*']) {
      const r = await call('GET', `/api/tasks/${task.id}/diff?file=${encodeURIComponent(odd)}`);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
    const missing = await call('GET', `/api/tasks/${task.id}/diff?file=nope.ts`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toMatch(/nope.ts is not part of the change/);
    expect((await call('GET', `/api/tasks/${task.id}/diff?version=7`)).status).toBe(404);
    expect((await call('GET', `/api/tasks/t_nope/diff`)).body.error.code).toBe('UNKNOWN_TASK');
    expect((await call('GET', `/api/tasks/${task.id}/diff?version=zero`)).status).toBe(400);
  });

  it('on a shared remote the diff comes from this host\'s clone, where the task branches are', async () => {
    const remote = join(reviewRepo(), '.git');
    const project = (await call('POST', '/api/projects', { name: 'shared', repoPath: repo, config: { remote, provider: { kind: 'scripted', script: join(repo, 'x.yaml') } } })).body.project;
    const task = (await call('POST', '/api/tasks', { projectId: project.id, title: 'Remote change' })).body.task;
    const clone = join(d.config.home, 'clones', project.id);
    mkdirSync(join(d.config.home, 'clones'), { recursive: true });
    git(d.config.home, 'clone', '-q', remote, clone);
    makeTaskBranch(clone, task.id);
    expect(git(repo, 'branch', '--list', `maestro/${task.id}-v1`)).toBe('');
    const diff = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body.files).toHaveLength(6);
  });

  it('a file over 50 MB stays a placeholder even when asked for by name', async () => {
    const { task } = await setup();
    git(repo, 'checkout', '-q', '-b', `maestro/${task.id}-v1`);
    mkdirSync(join(repo, 'data'));
    writeFileSync(join(repo, 'data/huge.csv'), Buffer.alloc(51 * 1024 * 1024, 'a\n'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'huge');
    git(repo, 'checkout', '-q', 'main');
    const one = await call('GET', `/api/tasks/${task.id}/diff?file=data/huge.csv`);
    expect(one.status).toBe(200);
    expect(one.body.files[0]).toMatchObject({ path: 'data/huge.csv', status: 'added', collapsed: true, hunks: [] });
  });

  it('a deleted branch still shows its change while the commit is known, else a clear 409', async () => {
    const { task } = await setup();
    const branch = makeTaskBranch(repo, task.id);
    const sha = git(repo, 'rev-parse', branch);
    await d.store.tasks.transition(task.id, 'queued', { fields: { result: { kind: 'execute', branch, commitSha: sha } } });
    git(repo, 'branch', '-D', branch);
    const kept = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(kept.status).toBe(200);
    expect(kept.body.head).toBe(sha);
    expect(kept.body.files).toHaveLength(6);

    await d.store.tasks.transition(task.id, 'executing', { fields: { result: { kind: 'execute', branch, commitSha: 'f'.repeat(40) } } });
    const gone = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(gone.status).toBe(409);
    expect(gone.body.error).toMatchObject({ code: 'NO_DIFF' });
    expect(gone.body.error.message).toContain(`its branch ${branch} no longer exists`);
  });

  it('a merged version whose branch took main in before a fast-forward shows its own change, not main\'s', async () => {
    const { project, task } = await setup();
    const branch = makeTaskBranch(repo, task.id);
    // Main moves on; the branch takes it in (a merge commit whose second parent is main), then main fast-forwards to it.
    writeFileSync(join(repo, 'main-only.txt'), 'from main\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'main moves on');
    git(repo, 'checkout', '-q', branch);
    git(repo, 'merge', '-q', '--no-edit', 'main');
    git(repo, 'checkout', '-q', 'main');
    const previousSha = git(repo, 'rev-parse', 'main');
    git(repo, 'merge', '-q', '--ff-only', branch);
    const sha = git(repo, 'rev-parse', 'main');
    await toExecReview(task.id);
    await d.store.tasks.transition(task.id, 'merging', { fields: { result: { kind: 'review', branch } } });
    await d.store.tasks.recordMerge({ taskId: task.id, projectId: project.id, branch, sha, how: 'fast-forward', previousSha });
    git(repo, 'branch', '-D', branch);
    const diff = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body.head).toBe(sha);
    expect(diff.body.files.map((f: { path: string }) => f.path).sort()).toEqual(['added.ts', 'big.txt', 'gone.txt', 'logo.png', 'new-name.md', 'src.ts']);
  });

  it('approves and rejects without naming the gate; line comments are checked against the diff and reach the next version', async () => {
    const { task } = await setup();
    makeTaskBranch(repo, task.id);
    const noGate = await call('POST', `/api/tasks/${task.id}/approve`, {});
    expect(noGate.status).toBe(409);
    expect(noGate.body.error.message).toMatch(/waits at no gate/);
    await toExecReview(task.id);

    const badFile = await call('POST', `/api/tasks/${task.id}/reject`, { reason: 'fix', comments: [{ file: 'src.ts', line: 2, text: 'ok' }, { file: 'other.ts', line: 1, text: 'x' }] });
    expect(badFile.status).toBe(400);
    expect(badFile.body.error.message).toMatch(/comments\[1\] \(other.ts:1\): other.ts is not part of this change/);
    const badLine = await call('POST', `/api/tasks/${task.id}/reject`, { reason: 'fix', comments: [{ file: 'src.ts', line: 99, text: 'x' }] });
    expect(badLine.body.error.message).toMatch(/comments\[0\] \(src.ts:99\): line 99 does not exist; src.ts has 3 line/);
    const binary = await call('POST', `/api/tasks/${task.id}/reject`, { reason: 'fix', comments: [{ file: 'logo.png', line: 1, text: 'x' }] });
    expect(binary.body.error.message).toMatch(/binary/);
    const deletedNew = await call('POST', `/api/tasks/${task.id}/reject`, { reason: 'fix', comments: [{ file: 'gone.txt', line: 1, text: 'x' }] });
    expect(deletedNew.body.error.message).toMatch(/has no new side/);
    expect((await call('GET', `/api/tasks/${task.id}`)).body.task.status).toBe('exec_review');

    const rejected = await call('POST', `/api/tasks/${task.id}/reject`, {
      reason: 'two things',
      comments: [{ file: 'src.ts', line: 2, text: 'b must stay 2' }, { file: 'gone.txt', line: 1, side: 'old', text: 'keep this file' }],
    });
    expect(rejected.status).toBe(200);
    const next = rejected.body.next;
    expect(next.version).toBe(2);
    expect(next.feedback).toContain('- src.ts:2 — b must stay 2');
    expect(next.feedback).toContain('- gone.txt:1 (old side, a removed line) — keep this file');
    // The same as data, for a client to say in its own language (the board); read back from the task too.
    const source = { kind: 'rejection', gate: 'exec_review', who: expect.any(String), reason: 'two things', comments: [{ file: 'src.ts', line: 2, side: 'new', text: 'b must stay 2' }, { file: 'gone.txt', line: 1, side: 'old', text: 'keep this file' }] };
    expect(next.feedbackSource).toEqual(source);
    expect((await call('GET', `/api/tasks/${next.id}`)).body.task.feedbackSource).toEqual(source);
    // The decision's event says where it was made.
    const decided = (await d.store.events.list({ taskId: task.id, type: 'task.status' })).events.find((e) => e.payload.decision === 'reject');
    expect(decided?.payload).toMatchObject({ from: 'exec_review', to: 'superseded', origin: { address: '127.0.0.1', client: 'http', userAgent: 'lightMyRequest' } });

    // Either version's id shows the whole chain; ?version= picks the other one.
    for (const id of [task.id, next.id]) {
      const shown = await call('GET', `/api/tasks/${id}`);
      expect(shown.body.versions).toEqual([{ id: task.id, version: 1, status: 'superseded' }, { id: next.id, version: 2, status: 'ready' }]);
    }
    expect((await call('GET', `/api/tasks/${next.id}/diff?version=1`)).body.files).toHaveLength(6);
    expect((await call('GET', `/api/tasks/${next.id}/diff`)).body.error.code).toBe('NO_DIFF');

    // The next version approved without naming the gate; its event says where the approval came from too.
    await toExecReview(next.id);
    expect((await call('POST', `/api/tasks/${next.id}/approve`, {})).body.task.status).toBe('merging');
    const approved = (await d.store.events.list({ taskId: next.id, type: 'task.status' })).events.find((e) => e.payload.decision === 'approve');
    expect(approved?.payload).toMatchObject({ from: 'exec_review', to: 'merging', origin: { address: '127.0.0.1', client: 'http', userAgent: 'lightMyRequest' } });
  });

  it('lists configured checks as pending before any run, and no verdicts yet', async () => {
    mkdirSync(join(repo, '.maestro'));
    writeFileSync(join(repo, '.maestro/config.json'), JSON.stringify({ checks: { lint: 'npm run lint', test: ['node', '--test'] } }));
    const { task } = await setup();
    const checks = await call('GET', `/api/tasks/${task.id}/checks`);
    expect(checks.body).toEqual({
      taskId: task.id,
      version: 1,
      checks: [
        { name: 'lint', command: 'npm run lint', status: 'pending', exitCode: null, durationMs: null, outputTail: '', runId: null },
        { name: 'test', command: 'node --test', status: 'pending', exitCode: null, durationMs: null, outputTail: '', runId: null },
      ],
    });
    const findings = await call('GET', `/api/tasks/${task.id}/findings`);
    expect(findings.body).toEqual({ taskId: task.id, version: 1, verdicts: [], findings: [] });
    expect((await call('GET', `/api/tasks/${task.id}/checks?version=3`)).status).toBe(404);
    // A version that will never run them (cancelled here; superseded at a plan gate, a parent): skipped, not pending.
    await d.store.tasks.transition(task.id, 'cancelled');
    expect((await call('GET', `/api/tasks/${task.id}/checks`)).body.checks.map((c: { status: string }) => c.status)).toEqual(['skipped', 'skipped']);
  });

  it('says at exec_review when an approval could not merge yet: the checkout has uncommitted changes', async () => {
    const { task } = await setup();
    await toExecReview(task.id);
    expect((await call('GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toBeNull();
    writeFileSync(join(repo, 'notes.txt'), 'an edit of my own\n');
    git(repo, 'add', 'notes.txt');
    expect((await call('GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toMatch(/has uncommitted changes \(notes\.txt\); commit or stash them before merging/);
    await d.store.tasks.transition(task.id, 'executing');
    expect((await call('GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toBeNull();
  });

  it('numbers review rounds: each review run with a verdict is one, oldest first', async () => {
    const { task } = await setup();
    await toExecReview(task.id);
    const verdict = (reviewer: string, v: 'approve' | 'reject', message?: string) => ({ reviewer, verdict: v, summary: '', findings: message ? [{ severity: 'medium', file: 'a.txt', line: 1, message }] : [] });
    const rounds = [
      [verdict('code', 'reject', 'add a comment'), verdict('security', 'approve')],
      [verdict('code', 'reject', 'add a comment, still'), verdict('security', 'approve')],
      [verdict('code', 'approve'), verdict('security', 'approve')],
    ];
    const runIds: string[] = [];
    for (const [i, [code, security]] of rounds.entries()) {
      const runDir = tempDir(`maestro-run-${i}-`);
      new StageBook(runDir).markDone('review:code', code);
      new StageBook(runDir).markDone('review:security', security);
      const run = await d.store.runs.create({ taskId: task.id, kind: 'review', model: null, traceId: `t${i}`, attempt: 1, runDir });
      runIds.push(run.id);
    }
    const findings = (await call('GET', `/api/tasks/${task.id}/findings`)).body;
    expect(findings.verdicts.map((v: { reviewer: string; verdict: string; round: number; runId: string }) => [v.round, v.reviewer, v.verdict, v.runId])).toEqual([
      [1, 'code', 'reject', runIds[0]], [1, 'security', 'approve', runIds[0]],
      [2, 'code', 'reject', runIds[1]], [2, 'security', 'approve', runIds[1]],
      [3, 'code', 'approve', runIds[2]], [3, 'security', 'approve', runIds[2]],
    ]);
    expect(findings.findings.map((f: { round: number; message: string }) => [f.round, f.message])).toEqual([[1, 'add a comment'], [2, 'add a comment, still']]);
  });

  it('lists the review routes in the OpenAPI document', async () => {
    const paths = (await call('GET', '/api/openapi.json')).body.paths;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/api/tasks/{id}/diff', '/api/tasks/{id}/checks', '/api/tasks/{id}/findings']));
  });
});
