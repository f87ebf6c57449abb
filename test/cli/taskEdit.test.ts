/**
 * `maestro task edit` through a real daemon, as a person uses it after `task show` says a task cannot start:
 * it prints what changed, `--no-deps` clears the dependencies and `--no-type` (and the like) an optional field,
 * a refusal (a cycle) changes nothing, and a dependency named by a superseded version is stored as the newest
 * version, saying so. It reads the task once (the read that finds its newest version) and prints the PATCH answer.
 */
import { createServer, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { snapshot } from '../store/contract.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

/** A pass-through to the daemon that notes each request's method and path: what the CLI asked of the daemon. */
async function recordingProxy(daemonUrl: string): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const to = new URL(daemonUrl);
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host }, agent: false }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    out.on('error', (err) => res.destroy(err));
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = () => new Promise<void>((r) => server.close(() => r()).closeAllConnections());
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, close };
}

// Each CLI process takes seconds to start on a loaded machine: a generous budget, no timing assertions.
describe('maestro task edit', { timeout: budget(240_000) }, () => {
  it('drops a stuck dependency as task show says, clears deps with --no-deps, and a cycle is refused changing nothing', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const schema = await d.store.tasks.create({ projectId: p.id, title: 'Schema' });
      await d.store.tasks.transition(schema.id, 'needs_attention');
      const api = await d.store.tasks.create({ projectId: p.id, title: 'Api' });
      const checkout = await d.store.tasks.create({ projectId: p.id, title: 'Checkout', deps: [schema.id, api.id] });

      const shown = await cli(['task', 'show', checkout.id, ...url]);
      expect(shown.stdout).toContain(`Retry that (maestro task retry ${schema.id}) or drop it from its deps (maestro task edit ${checkout.id} --deps ${api.id}).`);

      const edited = await cli(['task', 'edit', checkout.id, '--deps', api.id, '--title', 'Checkout page', '--priority', 'P0', ...url]);
      expect([edited.code, edited.stderr]).toEqual([0, '']);
      expect(edited.stdout).toBe(`Edited ${checkout.id} (ready):\n  title: Checkout → Checkout page\n  priority: P1 → P0\n  depends on: ${schema.id}, ${api.id} → ${api.id}\n`);
      expect(await d.store.tasks.get(checkout.id)).toMatchObject({ title: 'Checkout page', priority: 0, deps: [api.id] });

      // Api waiting for Checkout would close a cycle: the daemon's refusal, as the CLI shows refusals, and nothing changes.
      const before = await snapshot(d.store.db);
      const cycle = await cli(['task', 'edit', api.id, '--deps', checkout.id, '--title', 'Api v2', ...url]);
      expect(cycle.code).toBe(1);
      expect(cycle.stdout).toBe('');
      expect(cycle.stderr).toMatch(/^maestro: .*cycle.*\[DEPENDENCY_CYCLE\]\n$/);
      expect(cycle.stderr).toContain(`${api.id} (Api)`);
      expect(await snapshot(d.store.db)).toEqual(before);

      const cleared = await cliJson<{ task: Task }>(['task', 'edit', checkout.id, '--no-deps', ...url]);
      expect([cleared.code, cleared.body.task.deps]).toEqual([0, []]);
      const nothing = await cli(['task', 'edit', checkout.id, ...url]);
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toContain('Nothing to change: give at least one option');
    } finally {
      await d.stop();
    }
  });

  it('clears type, scope, expected output and spec with --no-type, --no-scope, --no-expected and --no-spec', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const t = await d.store.tasks.create({ projectId: p.id, title: 'Cart', taskType: 'feature', scope: 'module', expectedOutput: 'a cart page', spec: 'Build it.\nWith a total.' });
      expect((await cli(['task', 'show', t.id, ...url])).stdout).toContain('  type: feature   scope: module\n  expected: a cart page\n  spec:\n    Build it.\n    With a total.\n');

      const typeOnly = await cli(['task', 'edit', t.id, '--no-type', ...url]);
      expect([typeOnly.code, typeOnly.stderr, typeOnly.stdout]).toEqual([0, '', `Edited ${t.id} (ready):\n  type: feature → -\n`]);
      expect((await cli(['task', 'show', t.id, ...url])).stdout).toContain('  type: -   scope: module\n');

      const rest = await cli(['task', 'edit', t.id, '--no-scope', '--no-expected', '--no-spec', ...url]);
      expect([rest.code, rest.stderr, rest.stdout]).toEqual([0, '', `Edited ${t.id} (ready):\n  scope: module → -\n  expected: a cart page → -\n  spec: 23 characters → -\n`]);
      // task show prints none of the four now (a line appears only for a field a task has), and the API answers null.
      const shown = await cli(['task', 'show', t.id, ...url]);
      expect(shown.stdout).not.toMatch(/type:|scope:|expected:|spec:/);
      const json = await cliJson<{ task: Task }>(['task', 'show', t.id, ...url]);
      expect(json.body.task).toMatchObject({ taskType: null, scope: null, expectedOutput: null, spec: null });
      expect(await d.store.tasks.get(t.id)).toMatchObject({ taskType: null, scope: null, expectedOutput: null, spec: null });
    } finally {
      await d.stop();
    }
  });

  it('reads the task once, takes the edited one from the PATCH answer, and reads the newest version once more only for a superseded id', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    const proxy = await recordingProxy(d.url);
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', proxy.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const t = await d.store.tasks.create({ projectId: p.id, title: 'Cart' });
      const edited = await cli(['task', 'edit', t.id, '--title', 'Cart page', ...url]);
      expect([edited.code, edited.stderr, edited.stdout]).toEqual([0, '', `Edited ${t.id} (ready):\n  title: Cart → Cart page\n`]);
      expect(proxy.seen).toEqual([`GET /api/tasks/${t.id}`, `PATCH /api/tasks/${t.id}`]);

      // A superseded id: the chain names the newest version's id, not its fields, so that version is read too.
      for (const s of ['queued', 'executing', 'exec_review'] as const) await d.store.tasks.transition(t.id, s);
      const { next } = await d.store.tasks.reject(t.id, 'exec_review', 'ann', 'again');
      proxy.seen.length = 0;
      const newer = await cli(['task', 'edit', t.id, '--priority', 'P0', ...url]);
      expect([newer.code, newer.stderr, newer.stdout]).toEqual([0, `maestro: ${t.id} was superseded; acting on its newest version ${next.id}.\n`, `Edited ${next.id} (ready):\n  priority: P1 → P0\n`]);
      expect(proxy.seen).toEqual([`GET /api/tasks/${t.id}`, `GET /api/tasks/${next.id}`, `PATCH /api/tasks/${next.id}`]);
    } finally {
      await proxy.close();
      await d.stop();
    }
  });

  it('says at create that a dependency needing attention holds the new task, with the ways out; nothing for one on its way', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const stuck = await d.store.tasks.create({ projectId: p.id, title: 'Broken base' });
      for (const s of ['queued', 'executing', 'needs_attention'] as const) await d.store.tasks.transition(stuck.id, s);
      const fine = await d.store.tasks.create({ projectId: p.id, title: 'Fine base' });

      const told = await cli(['task', 'create', 'After', '--project', 'shop', '--deps', `${stuck.id},${fine.id}`, ...url]);
      expect(told.code).toBe(0);
      const id = /^Created task (\S+) /.exec(told.stdout)![1]!;
      expect(told.stdout.split('\n')[1]).toBe(`It cannot start: it depends on ${stuck.id} "Broken base" (needs_attention). Retry that (maestro task retry ${stuck.id}) or drop it from its deps (maestro task edit ${id} --deps ${fine.id}).`);
      const quiet = await cli(['task', 'create', 'Later', '--project', 'shop', '--deps', fine.id, ...url]);
      expect(quiet.stdout.trim().split('\n')).toHaveLength(1);
    } finally {
      await d.stop();
    }
  });

  it('takes a dependency named by a superseded version to mean the newest, at create and at edit, and says so', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const v1 = await d.store.tasks.create({ projectId: p.id, title: 'Base' });
      for (const s of ['queued', 'executing', 'exec_review'] as const) await d.store.tasks.transition(v1.id, s);
      const { next: v2 } = await d.store.tasks.reject(v1.id, 'exec_review', 'ann', 'again');

      const created = await cliJson<{ task: Task }>(['task', 'create', 'After', '--project', 'shop', '--deps', v1.id, ...url]);
      expect([created.code, created.body.task.deps]).toEqual([0, [v2.id]]);
      const told = await cli(['task', 'create', 'Later', '--project', 'shop', '--deps', v1.id, ...url]);
      expect(told.stdout).toContain(`\n${v1.id} is an older version: it depends on the newest (${v2.id}).\n`);

      const other = await d.store.tasks.create({ projectId: p.id, title: 'Other' });
      const edited = await cli(['task', 'edit', other.id, '--deps', v1.id, ...url]);
      expect(edited.stdout).toBe(`Edited ${other.id} (ready):\n  depends on: nothing → ${v2.id}\n${v1.id} is an older version: it depends on the newest (${v2.id}).\n`);
      expect((await cli(['task', 'show', other.id, ...url])).stdout).toContain(`depends on: ${v2.id}`);

      // A task stored before this with a superseded dependency waited for good: task show names the command that
      // points it at the newest version, and that command does.
      const stale = await d.store.tasks.create({ projectId: p.id, title: 'Stale' });
      await d.store.db.run(`UPDATE tasks SET deps = $1 WHERE id = $2`, [JSON.stringify([v1.id]), stale.id]);
      const hint = `It cannot start. It depends on an older version of a task: ${v1.id} "Base" (superseded). Point it at the newest (maestro task edit ${stale.id} --deps ${v1.id}).`;
      expect((await cli(['task', 'show', stale.id, ...url])).stdout).toContain(hint);
      expect((await cli(['task', 'edit', stale.id, '--deps', v1.id, ...url])).code).toBe(0);
      expect((await d.store.tasks.get(stale.id)).deps).toEqual([v2.id]);
    } finally {
      await d.stop();
    }
  });
});
