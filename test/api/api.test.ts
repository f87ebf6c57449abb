/**
 * The REST API in-process (app.inject) against a real store: every route's
 * happy path and its refusals, with stable error codes and no partial change.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git, makeRepo } from '../helpers/repo.js';

describe('REST API', () => {
  let d: TestDaemon;
  let repo: string;
  beforeEach(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    repo = makeRepo();
  });
  afterEach(async () => {
    await d.stop();
    removeTempDirs();
  });

  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    // A bodyless write says X-Maestro-Client, as the board's does (the guard refuses it otherwise).
    const res = await d.app.inject({ method, url, ...(payload === undefined ? { headers: { 'x-maestro-client': 'test' } } : { payload: payload as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null, headers: res.headers };
  };
  const project = async () => (await call('POST', '/api/projects', { name: 'web', repoPath: repo })).body.project;

  it('registers a repository as a project and refuses what is not one', async () => {
    const created = await call('POST', '/api/projects', { name: 'web', repoPath: repo });
    expect(created.status).toBe(201);
    expect(created.body.project).toMatchObject({ name: 'web', repoPath: repo });
    expect((await call('POST', '/api/projects', { name: 'web', repoPath: repo })).body.error.code).toBe('DUPLICATE_PROJECT');
    // The same checkout under another name: two projects would merge into one working tree.
    const again = await call('POST', '/api/projects', { name: 'other', repoPath: `${repo}/` });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'DUPLICATE_PROJECT', message: `${repo} is already registered as project web (${created.body.project.id}); nothing was registered.` });
    const notRepo = await call('POST', '/api/projects', { name: 'x', repoPath: '/tmp' });
    expect(notRepo.status).toBe(400);
    expect(notRepo.body.error.message).toMatch(/not a git repository/);
    expect((await call('POST', '/api/projects', { name: 'y', repoPath: 'relative/path' })).body.error.message).toMatch(/absolute/);
    const shown = await call('GET', `/api/projects/${created.body.project.id}`);
    expect(shown.body).toMatchObject({ project: { name: 'web' }, tasksByStatus: {} });
    expect((await call('GET', '/api/projects')).body.projects).toHaveLength(1);
  });

  it('takes a link to a registered checkout as that checkout (refused), and stores the real path of one registered through a link', async () => {
    const created = await call('POST', '/api/projects', { name: 'web', repoPath: repo });
    const links = tempDir('maestro-links-');
    symlinkSync(repo, join(links, 'repo-link'));
    const viaLink = await call('POST', '/api/projects', { name: 'web-again', repoPath: join(links, 'repo-link') });
    expect(viaLink.status).toBe(409);
    expect(viaLink.body.error).toMatchObject({ code: 'DUPLICATE_PROJECT', message: `${join(links, 'repo-link')} (that is ${repo}, links followed) is already registered as project web (${created.body.project.id}); nothing was registered.` });
    // One more checkout, registered only through a link: stored as where it is, so a re-pointed link cannot move it.
    const other = makeRepo();
    symlinkSync(other, join(links, 'other-link'));
    const linked = await call('POST', '/api/projects', { name: 'other', repoPath: join(links, 'other-link') });
    expect(linked.status).toBe(201);
    expect(linked.body.project.repoPath).toBe(realpathSync(other));
    expect((await call('POST', '/api/projects', { name: 'other-again', repoPath: other })).body.error.code).toBe('DUPLICATE_PROJECT');
    // A project stored through a link before paths were stored resolved still counts as its checkout.
    const legacy = makeRepo();
    symlinkSync(legacy, join(links, 'legacy-link'));
    await d.store.projects.create({ name: 'legacy', repoPath: join(links, 'legacy-link') });
    expect((await call('POST', '/api/projects', { name: 'legacy-again', repoPath: legacy })).body.error.code).toBe('DUPLICATE_PROJECT');
    expect((await call('GET', '/api/projects')).body.projects).toHaveLength(3);
  });

  it("shows what the repository's own .maestro/ sets (checks, limits, tiers, hooks), and why it could not be read", async () => {
    const configured = makeRepo({
      'README.md': '# test\n',
      '.maestro/config.json': JSON.stringify({ checks: [{ name: 'import', command: ['node', '-e', '1'] }], limits: { maxDiffFiles: 7 }, models: { easy: 'small-model' } }),
      '.maestro/hooks/before-execute.sh': 'exit 0\n',
    });
    const p = (await call('POST', '/api/projects', { name: 'configured', repoPath: configured })).body.project;
    expect((await call('GET', `/api/projects/${p.id}`)).body.repository).toEqual({
      file: join('.maestro', 'config.json'),
      hooks: [join('.maestro', 'hooks', 'before-execute.sh')],
      checks: [{ name: 'import', command: ['node', '-e', '1'] }],
      limits: { maxDiffFiles: 7 },
      models: { easy: 'small-model' },
      problem: null,
    });
    const broken = makeRepo({ 'README.md': '# test\n', '.maestro/config.json': '{"checks": [' });
    const q = (await call('POST', '/api/projects', { name: 'broken', repoPath: broken })).body.project;
    const shown = (await call('GET', `/api/projects/${q.id}`)).body.repository;
    expect(shown).toMatchObject({ file: null, checks: [], limits: {}, models: {} });
    expect(shown.problem).toBe(`${join(broken, '.maestro', 'config.json')} is not valid JSON (it ends early, at line 1, column 13).`);
    // A project without one: nothing set there, and nothing wrong.
    expect((await call('GET', `/api/projects/${(await project()).id}`)).body.repository).toEqual({ file: null, hooks: [], checks: [], limits: {}, models: {}, problem: null });
  });

  it('refuses a folder inside a repository, naming the repository to register instead of advising git init', async () => {
    const sub = join(repo, 'packages', 'web');
    mkdirSync(sub, { recursive: true });
    // The top as git names it (links resolved): what the message tells the user to register.
    const top = execFileSync('git', ['-C', sub, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
    const refused = await call('POST', '/api/projects', { name: 'web', repoPath: sub });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'BAD_INPUT',
      message: `repoPath ${sub} is a folder inside the git repository ${top}, not its top. Register the repository itself (maestro project add ${top}); nothing was registered.`,
      details: { repository: top },
    });
    expect((await call('GET', '/api/projects')).body.projects).toEqual([]);
    expect(existsSync(join(sub, '.git'))).toBe(false);
    // What it says to do works.
    expect((await call('POST', '/api/projects', { name: 'web', repoPath: top })).status).toBe(201);
  });

  it('takes the base branch a repository has (main, else the one checked out) and refuses an empty repository or a branch it lacks', async () => {
    const onMaster = tempDir('maestro-master-');
    git(onMaster, 'init', '-q', '-b', 'master');
    git(onMaster, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'first');
    const empty = tempDir('maestro-empty-');
    git(empty, 'init', '-q', '-b', 'main');

    const refused = await call('POST', '/api/projects', { name: 'empty', repoPath: empty });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(`${empty} has no commit yet: tasks start from its base branch and merge back into it. Make a first commit there (git commit --allow-empty -m "First commit"), then register it.`);
    const lacking = await call('POST', '/api/projects', { name: 'm', repoPath: onMaster, config: { baseBranch: 'develop' } });
    expect(lacking.status).toBe(400);
    expect(lacking.body.error.message).toBe(`baseBranch "develop" is not a branch of ${onMaster} (its branches: master); nothing was saved.`);
    expect((await call('GET', '/api/projects')).body.projects).toEqual([]);

    // Main by default, recorded only when it is another branch.
    expect((await call('POST', '/api/projects', { name: 'web', repoPath: repo })).body.project.config).toEqual({});
    const master = await call('POST', '/api/projects', { name: 'm', repoPath: onMaster });
    expect(master.status).toBe(201);
    expect(master.body.project.config).toEqual({ baseBranch: 'master' });
    const changed = await call('PATCH', `/api/projects/${master.body.project.id}`, { config: { baseBranch: 'main' } });
    expect(changed.status).toBe(400);
    expect(changed.body.error.message).toBe(`baseBranch "main" is not a branch of ${onMaster} (its branches: master); nothing was saved.`);
    // Unset, the base would be main again, which it does not have.
    expect((await call('PATCH', `/api/projects/${master.body.project.id}`, { config: {} })).body.error.message).toBe(changed.body.error.message);
    expect((await call('GET', `/api/projects/${master.body.project.id}`)).body.project.config).toEqual({ baseBranch: 'master' });
  });

  it('registers a shared remote (a bare repository) as the project of several daemons, and refuses a bare one without config.remote', async () => {
    const remote = bareRemote(tempDir('maestro-remote-'));
    const bare = await call('POST', '/api/projects', { name: 'solo', repoPath: remote });
    expect(bare.status).toBe(400);
    expect(bare.body.error.message).toMatch(/is a bare repository, which has no work tree.*config\.remote/);
    expect((await call('GET', '/api/projects')).body.projects).toHaveLength(0);
    const shared = await call('POST', '/api/projects', { name: 'web', repoPath: remote, config: { remote } });
    expect(shared.status).toBe(201);
    expect(shared.body.project).toMatchObject({ name: 'web', repoPath: remote, config: { remote } });
    const dropped = await call('PATCH', `/api/projects/${shared.body.project.id}`, { config: {} });
    expect(dropped.status).toBe(400);
    expect(dropped.body.error.message).toMatch(/bare repository, so its settings must name a shared remote/);
    expect((await call('GET', `/api/projects/${shared.body.project.id}`)).body.project.config).toEqual({ remote });
    // A remote path that is not on this machine is refused, not saved for every daemon to fail on (a URL may be
    // away for now: the next test).
    const refused = await call('PATCH', `/api/projects/${shared.body.project.id}`, { config: { remote: '/nonexistent/repo.git' } });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'BAD_INPUT', details: { field: 'config.remote' } } } });
    expect(refused.body.error.message).toBe('config.remote: /nonexistent/repo.git does not exist on this machine, so no daemon here could fetch from it; nothing was saved.');
    // A remote git would take for an option, or for a command to run, is no remote.
    for (const bad of ['--upload-pack=touch /tmp/x', 'ext::sh -c touch% /tmp/x']) {
      const refused = await call('PATCH', `/api/projects/${shared.body.project.id}`, { config: { remote: bad } });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.message).toMatch(/remote: a git URL or path \(not starting with -, no ext::/);
    }
    expect((await call('GET', `/api/projects/${shared.body.project.id}`)).body.project.config).toEqual({ remote });
    // A shared remote on this machine whose work is on master: its base branch, as for a checkout.
    const onMaster = bareRemote(tempDir('maestro-remote-'));
    git(onMaster, 'branch', '-m', 'main', 'master');
    const master = await call('POST', '/api/projects', { name: 'old', repoPath: onMaster, config: { remote: onMaster } });
    expect(master.body.project.config).toEqual({ remote: onMaster, baseBranch: 'master' });
  });

  it('checks the base branch of a network remote as it answers git ls-remote, and leaves one that does not answer to the daemons', async () => {
    // A URL is reached through git's transport, as an ssh:// or https:// remote is: no path read on this machine.
    const onMaster = bareRemote(tempDir('maestro-remote-'));
    git(onMaster, 'branch', '-m', 'main', 'master');
    const url = `file://${onMaster}`;
    const lacking = await call('POST', '/api/projects', { name: 'm', repoPath: onMaster, config: { remote: url, baseBranch: 'develop' } });
    expect(lacking.status).toBe(400);
    expect(lacking.body.error.message).toBe(`baseBranch "develop" is not a branch of ${url} (its branches: master); nothing was saved.`);
    expect((await call('GET', '/api/projects')).body.projects).toEqual([]);
    const master = await call('POST', '/api/projects', { name: 'm', repoPath: onMaster, config: { remote: url } });
    expect(master.status).toBe(201);
    expect(master.body.project.config).toEqual({ remote: url, baseBranch: 'master' });
    // A PATCH to another remote is checked against that one: this one has main only.
    const other = bareRemote(tempDir('maestro-remote-'));
    const moved = await call('PATCH', `/api/projects/${master.body.project.id}`, { config: { remote: `file://${other}`, baseBranch: 'master' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error.message).toBe(`baseBranch "master" is not a branch of file://${other} (its branches: main); nothing was saved.`);
    expect((await call('GET', `/api/projects/${master.body.project.id}`)).body.project.config).toEqual({ remote: url, baseBranch: 'master' });
    // A remote that does not answer now is registered as before: each daemon's first sync says what is wrong.
    const away = `file://${join(tempDir('maestro-gone-'), 'nothing.git')}`;
    const later = await call('POST', '/api/projects', { name: 'away', repoPath: other, config: { remote: away } });
    expect(later.status).toBe(201);
    expect(later.body.project.config).toEqual({ remote: away });
  });

  it('creates, lists, shows and edits tasks; bad bodies name the field', async () => {
    const p = await project();
    const a = (await call('POST', '/api/tasks', { projectId: p.id, title: 'First', priority: 0 })).body.task;
    const b = await call('POST', '/api/tasks', { projectId: p.id, title: 'Second', deps: [a.id] });
    expect(b.status).toBe(201);
    const bad = await call('POST', '/api/tasks', { projectId: p.id, title: 'x', priority: 'urgent' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'BAD_INPUT' });
    expect(bad.body.error.message).toBe('Invalid body: priority: must be 0, 1 or 2 (0 goes first)');
    // A key no route knows, in the query: said as the query's, not as some body's.
    expect((await call('GET', '/api/tasks?bogus=1')).body.error.message).toBe('Invalid query: Unrecognized key: "bogus"');
    expect((await call('POST', '/api/tasks', { projectId: p.id, title: 'x', sneaky: 1 })).body.error.message).toMatch(/sneaky/);
    // A title is one line: a line break or an escape sequence broke `task list` and coloured the terminal.
    for (const title of ['two\nlines', 'red \u001b[31mtext', 'a\u0000b', 'red \u009b31mtext (the 8-bit escape)', 'next\u0085line', 'line\u2028separator']) {
      const refused = await call('POST', '/api/tasks', { projectId: p.id, title });
      expect(refused.status, JSON.stringify(title)).toBe(400);
      expect(refused.body.error.message).toMatch(/title: must be one line without control characters/);
    }
    expect((await call('PATCH', `/api/tasks/${a.id}`, { title: 'tab\there' })).status).toBe(400);
    expect((await call('GET', `/api/tasks?projectId=${p.id}&status=ready`)).body.tasks.map((t: { title: string }) => t.title)).toEqual(['First', 'Second']);
    expect((await call('GET', `/api/tasks?q=sec`)).body.tasks.map((t: { title: string }) => t.title)).toEqual(['Second']);
    expect((await call('GET', `/api/tasks?status=bogus`)).status).toBe(400);
    // The board's slim rows: the fields a card and the dependency graph read, nothing more.
    const slim = (await call('GET', `/api/tasks?projectId=${p.id}&view=board`)).body.tasks;
    expect(slim.map((t: { title: string }) => t.title)).toEqual(['First', 'Second']);
    expect(Object.keys(slim[1]).sort()).toEqual(['complexity', 'createdAt', 'deps', 'id', 'mergeCheck', 'mergeTurn', 'parentId', 'priority', 'projectId', 'status', 'title', 'updatedAt', 'version']);
    expect(slim[1].mergeCheck).toBeNull();
    expect(slim[1].mergeTurn).toBeNull();
    expect(slim[1].deps).toEqual([a.id]);
    expect((await call('GET', `/api/tasks?view=cards`)).body.error.message).toMatch(/view/);
    const shown = await call('GET', `/api/tasks/${a.id}`);
    expect(shown.body).toMatchObject({ task: { id: a.id, title: 'First' }, runs: [], children: [], lastDecision: null });
    expect((await call('PATCH', `/api/tasks/${a.id}`, { title: 'First!' })).body.task.title).toBe('First!');
    // A dependency cancelled later: the waiting task says what it is stuck on.
    expect((await call('GET', `/api/tasks/${b.body.task.id}`)).body.stuckOn).toEqual([]);
    await call('POST', `/api/tasks/${a.id}/cancel`, { reason: 'not now' });
    expect((await call('GET', `/api/tasks/${b.body.task.id}`)).body.stuckOn).toEqual([{ id: a.id, title: 'First!', status: 'cancelled' }]);
    await call('POST', `/api/tasks/${a.id}/retry`);
    const cycle = await call('PATCH', `/api/tasks/${a.id}`, { deps: [b.body.task.id] });
    expect(cycle).toMatchObject({ status: 400, body: { error: { code: 'DEPENDENCY_CYCLE' } } });
    expect((await call('GET', '/api/tasks/t_nope')).body.error.code).toBe('UNKNOWN_TASK');
  });

  it("names in a task's detail the branch its project merges into: main by default, else the project's baseBranch", async () => {
    const onMain = (await call('POST', '/api/tasks', { projectId: (await project()).id, title: 'On main' })).body.task;
    expect((await call('GET', `/api/tasks/${onMain.id}`)).body.baseBranch).toBe('main');
    const trunkRepo = makeRepo();
    git(trunkRepo, 'branch', '-m', 'main', 'trunk');
    git(trunkRepo, 'branch', 'release');
    const trunk = (await call('POST', '/api/projects', { name: 'trunk', repoPath: trunkRepo })).body.project;
    const task = (await call('POST', '/api/tasks', { projectId: trunk.id, title: 'On trunk' })).body.task;
    expect((await call('GET', `/api/tasks/${task.id}`)).body.baseBranch).toBe('trunk');
    // Changed in the project's config: the detail says the new one.
    expect((await call('PATCH', `/api/projects/${trunk.id}`, { config: { baseBranch: 'release' } })).status).toBe(200);
    expect((await call('GET', `/api/tasks/${task.id}`)).body.baseBranch).toBe('release');
  });

  it('refuses a dependency that is not done for a task whose work has started: its approval would merge it first', async () => {
    const p = await project();
    const first = (await call('POST', '/api/tasks', { projectId: p.id, title: 'Still at work' })).body.task;
    const t = (await call('POST', '/api/tasks', { projectId: p.id, title: 'At the gate' })).body.task;
    const { attempt } = await d.store.tasks.claim(t.id, 'someone', 60_000);
    expect(await d.store.tasks.advance({ id: t.id, owner: 'someone', attempt }, 'queued', 'executing')).toBe(true);
    expect(await d.store.tasks.advance({ id: t.id, owner: 'someone', attempt }, 'executing', 'exec_review')).toBe(true);
    const added = await call('PATCH', `/api/tasks/${t.id}`, { deps: [first.id] });
    expect(added).toMatchObject({ status: 409, body: { error: { code: 'ILLEGAL_TRANSITION', details: { dependency: first.id, field: 'deps' } } } });
    expect(added.body.error.message).toBe(`Task ${t.id} is exec_review: its work started without ${first.id}, which is ready; a dependency added now must be done already (or cancel the task and retry it: from ready it waits for its dependencies).`);
    expect((await d.store.tasks.get(t.id)).deps).toEqual([]);
    // The rest of an edit at the gate goes on; a task not started yet takes any dependency.
    expect((await call('PATCH', `/api/tasks/${t.id}`, { title: 'At the gate, renamed' })).status).toBe(200);
    const later = (await call('POST', '/api/tasks', { projectId: p.id, title: 'Not started' })).body.task;
    expect((await call('PATCH', `/api/tasks/${later.id}`, { deps: [first.id] })).body.task.deps).toEqual([first.id]);
  });

  it("refuses an edit of the plan at plan_review (the approval creates the proposed subtasks, not the text) and changes nothing", async () => {
    const p = await project();
    const t = (await call('POST', '/api/tasks', { projectId: p.id, title: 'Split four', complexity: 'hard' })).body.task;
    for (const s of ['queued', 'planning'] as const) await d.store.tasks.transition(t.id, s);
    const proposed = { kind: 'plan', plan: 'Two parts.', subtasks: [{ title: 'Part one', complexity: 'easy', priority: 1, deps: [], ownedFiles: [], expectedOutput: '' }] };
    await d.store.tasks.transition(t.id, 'plan_review', { fields: { plan: 'Two parts.', result: proposed } });
    const edited = await call('PATCH', `/api/tasks/${t.id}`, { plan: 'Only one subtask.', title: 'Split four, renamed' });
    expect(edited).toMatchObject({ status: 409, body: { error: { code: 'ILLEGAL_TRANSITION', details: { field: 'plan' } } } });
    expect(edited.body.error.message).toBe(
      `Task ${t.id} is plan_review: its plan cannot be edited, as its approval creates the proposed subtasks, not the plan text. To change them, reject the plan with a reason (maestro task reject): the planner plans again with it. Nothing was changed.`,
    );
    expect(await d.store.tasks.get(t.id)).toMatchObject({ plan: 'Two parts.', title: 'Split four' });
    // Other fields still edit at the gate; a task not planned yet takes a plan of a person's.
    expect((await call('PATCH', `/api/tasks/${t.id}`, { title: 'Split four, renamed' })).status).toBe(200);
    const later = (await call('POST', '/api/tasks', { projectId: p.id, title: 'Planned by hand' })).body.task;
    expect((await call('PATCH', `/api/tasks/${later.id}`, { plan: 'Do it in one go.' })).body.task.plan).toBe('Do it in one go.');
  });

  it('answers 409 for edits while a run is in flight, and for transitions the machine forbids', async () => {
    const p = await project();
    const t = (await call('POST', '/api/tasks', { projectId: p.id, title: 'Busy' })).body.task;
    await d.store.tasks.claim(t.id, 'someone', 60_000);
    const edit = await call('PATCH', `/api/tasks/${t.id}`, { title: 'nope' });
    expect(edit).toMatchObject({ status: 409, body: { error: { code: 'TASK_BUSY' } } });
    expect((await call('POST', `/api/tasks/${t.id}/retry`)).body.error.code).toBe('ILLEGAL_TRANSITION');
    expect((await call('POST', `/api/tasks/${t.id}/approve`, { gate: 'plan_review' })).body.error.code).toBe('WRONG_GATE');
    expect((await call('POST', `/api/tasks/${t.id}/reject`, { gate: 'plan_review' })).body.error.message).toMatch(/reason/);
    expect((await call('POST', `/api/tasks/${t.id}/reply`, { message: 'hi' })).status).toBe(409);
    const cancelled = await call('POST', `/api/tasks/${t.id}/cancel`, { reason: 'changed my mind' });
    expect(cancelled.body.task.status).toBe('cancelled');
    expect((await call('POST', `/api/tasks/${t.id}/cancel`, {})).status).toBe(409);
    const retried = await call('POST', `/api/tasks/${t.id}/retry`);
    expect(retried.body.task).toMatchObject({ status: 'ready', claimedAt: null, retryBaseline: 1 });
  });

  it('approves and rejects gates; a rejection answers the next version', async () => {
    const p = await project();
    const t = (await call('POST', '/api/tasks', { projectId: p.id, title: 'Gated' })).body.task;
    for (const s of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(t.id, s);
    const rejected = await call('POST', `/api/tasks/${t.id}/reject`, { gate: 'plan_review', reason: 'split it further', who: 'ann' });
    expect(rejected.body.task.status).toBe('superseded');
    expect(rejected.body.next).toMatchObject({ version: 2, parentVersionId: t.id, status: 'ready' });
    const approvals = await call('GET', `/api/approvals?taskId=${t.id}`);
    expect(approvals.body.approvals).toMatchObject([{ gate: 'plan_review', decision: 'reject', reason: 'split it further', who: 'ann' }]);
  });

  it('pages events, reports metrics and decisions, and serves its OpenAPI document', async () => {
    const p = await project();
    for (let i = 0; i < 3; i++) await call('POST', '/api/tasks', { projectId: p.id, title: `T${i}` });
    const page = await call('GET', `/api/events?projectId=${p.id}&limit=2`);
    expect(page.body.events.map((e: { type: string }) => e.type)).toEqual(['project.created', 'task.created']);
    const rest = await call('GET', `/api/events?projectId=${p.id}&after=${page.body.nextAfter}`);
    expect(rest.body.events.map((e: { type: string }) => e.type)).toEqual(['task.created', 'task.created']);
    const newest = await call('GET', `/api/events?projectId=${p.id}&order=newest&limit=3`);
    expect(newest.body.events.map((e: { payload: { title?: string } }) => e.payload.title)).toEqual(['T2', 'T1', 'T0']);
    expect(newest.body).toMatchObject({ nextAfter: null, nextBefore: newest.body.events[2].id });
    const sideways = await call('GET', `/api/events?projectId=${p.id}&order=sideways`);
    expect(sideways.status).toBe(400);
    expect(sideways.body.error.message).toMatch(/order/);
    expect((await call('GET', `/api/metrics?projectId=${p.id}`)).body.tasksByStatus).toEqual({ ready: 3 });
    expect((await call('GET', '/api/scheduler/decisions')).body.decisions).toEqual([]);
    const doc = (await call('GET', '/api/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/tasks', '/api/tasks/{id}', '/api/tasks/{taskId}/stream', '/api/traces/{traceId}', '/api/events']));
    expect(doc.paths['/api/tasks'].post.requestBody.content['application/json'].schema.properties.title).toBeDefined();
  });

  it('answers unknown routes, bad JSON and unknown ids with stable codes and a trace id', async () => {
    const unknown = await call('GET', '/api/nothing-here');
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(unknown.headers['x-trace-id']).toMatch(/^[0-9a-f-]{36}$/);
    const res = await d.app.inject({ method: 'POST', url: '/api/tasks', payload: '{"title":', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).error.code).toBe('BAD_INPUT');
    expect((await call('GET', '/api/runs/r_nope')).body.error.code).toBe('UNKNOWN_RUN');
    expect((await call('GET', '/api/traces/nope')).body.error.code).toBe('UNKNOWN_RUN');
  });
});
