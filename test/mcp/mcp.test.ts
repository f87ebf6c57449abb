/**
 * `maestro mcp` driven by the MCP SDK's own client over stdio, against a real
 * daemon in this process.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { ROOT, cleanEnv, gitRepo } from '../cli/helpers.js';
import { budget } from '../helpers/budget.js';
import { silentServer } from '../helpers/silentServer.js';
import { maestroArgs } from '../helpers/maestro.js';

afterEach(() => removeTempDirs());

/** `maestro mcp` as an agent's host starts it: with the daemon's home, so it reads the token from `$MAESTRO_HOME/token`. */
async function connect(url: string, home?: string, cwd = ROOT, extraEnv: Record<string, string> = {}): Promise<Client> {
  const env = cleanEnv({ ...(home ? { MAESTRO_HOME: home } : {}), ...extraEnv });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...maestroArgs(), 'mcp', '--url', url, '--agent', 'none'],
    cwd,
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string')),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'maestro-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

type CallResult = { isError?: boolean; content: { type: string; text: string }[] };

async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: T }> {
  const r = (await client.callTool({ name, arguments: args })) as CallResult;
  return { isError: Boolean(r.isError), body: JSON.parse(r.content[0]!.text) as T };
}

describe('maestro mcp', () => {
  it('offers the task and knowledge tools and drives tasks through the daemon API', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    let client: Client | null = null;
    try {
      const repo = gitRepo({ 'src/basket/basket.ts': 'export {}\n', 'src/auth/login.ts': 'export {}\n', 'README.md': '# shop\n' });
      await d.store.projects.create({ name: 'shop', repoPath: repo });
      client = await connect(d.url, d.config.home);

      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['approve', 'create_task', 'get_task', 'list_tasks', 'load_knowledge', 'search_knowledge', 'stage_knowledge', 'suggest_task_metadata']);

      const suggested = await call<{ taskType: string; scope: string; ownedFiles: string[]; source: string }>(client, 'suggest_task_metadata', { title: 'Fix basket totals', project: 'shop' });
      expect(suggested.isError).toBe(false);
      expect(suggested.body).toMatchObject({ taskType: 'bugfix', scope: 'file', ownedFiles: ['src/basket/basket.ts'], source: 'heuristic' });
      const byPath = await call<{ ownedFiles: string[] }>(client, 'suggest_task_metadata', { title: 'Login with passkeys', repoPath: repo });
      expect(byPath.body.ownedFiles).toEqual(['src/auth/login.ts']);
      // A repository no project holds, whose config names a program git would start: refused, the program not run.
      const stranger = gitRepo({ 'a.txt': 'a\n' });
      const ran = join(tempDir('maestro-marker-'), 'ran');
      execFileSync('git', ['config', 'core.fsmonitor', `touch ${ran}`], { cwd: stranger });
      const refused = await call<{ error: { code: string; message: string } }>(client, 'suggest_task_metadata', { title: 'Anything', repoPath: stranger });
      expect(refused).toEqual({ isError: true, body: { error: { code: 'BAD_INPUT', message: expect.stringContaining(`repoPath: ${stranger} is neither inside ${ROOT}, where this server was started, nor inside a registered project`) } } });
      expect(existsSync(ran)).toBe(false);

      const created = await call<{ task: Task }>(client, 'create_task', { project: 'shop', title: 'Fix basket totals', priority: 0, taskType: 'bugfix', ownedFiles: suggested.body.ownedFiles });
      expect(created.isError).toBe(false);
      expect(created.body.task).toMatchObject({ title: 'Fix basket totals', priority: 0, taskType: 'bugfix', ownedFiles: ['src/basket/basket.ts'], status: 'ready' });
      const id = created.body.task.id;
      // What the tool created is what the daemon stores.
      expect((await d.store.tasks.get(id)).title).toBe('Fix basket totals');

      const listed = await call<{ tasks: Task[] }>(client, 'list_tasks', { project: 'shop', status: ['ready'] });
      expect(listed.body.tasks.map((t) => t.id)).toEqual([id]);
      expect((await call<{ tasks: Task[] }>(client, 'list_tasks', { status: ['done'] })).body.tasks).toEqual([]);

      const shown = await call<{ task: Task; runs: unknown[] }>(client, 'get_task', { id });
      expect(shown.body.task.id).toBe(id);
      expect(shown.body.runs).toEqual([]);

      const notAtGate = await call<{ error: { code: string; message: string } }>(client, 'approve', { id, gate: 'plan_review' });
      expect(notAtGate.isError).toBe(true);
      expect(notAtGate.body.error.code).toMatch(/WRONG_GATE|ILLEGAL_TRANSITION/);
      expect((await d.store.tasks.get(id)).status).toBe('ready');

      for (const to of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(id, to);
      // A commit reaches the daemon, which says a plan gate approves no change.
      const withCommit = await call<{ error: { code: string; message: string } }>(client, 'approve', { id, gate: 'plan_review', commit: 'a'.repeat(40) });
      expect(withCommit.isError).toBe(true);
      expect(withCommit.body.error).toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/^commit: only an approval at exec_review names a commit/) });
      expect((await d.store.tasks.get(id)).status).toBe('plan_review');
      const approved = await call<{ task: Task }>(client, 'approve', { id, gate: 'plan_review', reason: 'fine' });
      expect(approved.isError).toBe(false);
      expect(approved.body.task.status).not.toBe('plan_review');
      expect((await d.store.approvals.list({ taskId: id }))[0]).toMatchObject({ gate: 'plan_review', decision: 'approve', who: 'mcp', reason: 'fine' });

      const unknown = await call<{ error: { code: string } }>(client, 'get_task', { id: 'nope' });
      expect(unknown).toEqual({ isError: true, body: { error: { code: 'UNKNOWN_TASK', message: expect.any(String) } } });
      const badProject = await call<{ error: { code: string } }>(client, 'create_task', { project: 'nope', title: 'x' });
      expect(badProject.body.error.code).toBe('UNKNOWN_PROJECT');
      // An argument a tool does not take is refused by name, not dropped: the task is not created as if it were taken.
      const before = (await d.store.tasks.list({})).length;
      const extra = (await client.callTool({ name: 'create_task', arguments: { project: 'shop', title: 'Elsewhere', repoPath: '/etc' } })) as CallResult;
      expect(extra.isError).toBe(true);
      expect(extra.content[0]!.text).toMatch(/Unrecognized key.*"repoPath"/s);
      expect((await d.store.tasks.list({})).length).toBe(before);
      expect(tools.find((t) => t.name === 'create_task')?.inputSchema).toMatchObject({ additionalProperties: false });
    } finally {
      await client?.close();
      await d.stop();
    }
  }, budget(120_000));

  it('answers suggest_task_metadata with no daemon, in the folder it was started in, and says so for the task tools', async () => {
    const repo = gitRepo({ 'docs/setup.md': '# setup\n' });
    // Even there, git's listing starts no program the repository's config names.
    const ran = join(tempDir('maestro-marker-'), 'ran');
    execFileSync('git', ['config', 'core.fsmonitor', `touch ${ran}`], { cwd: repo });
    const client = await connect('http://127.0.0.1:9', undefined, repo);
    try {
      const suggested = await call<{ taskType: string; ownedFiles: string[] }>(client, 'suggest_task_metadata', { title: 'Document the setup' });
      expect(suggested.body).toMatchObject({ taskType: 'docs', ownedFiles: ['docs/setup.md'] });
      expect(existsSync(ran)).toBe(false);
      // A shared remote (a bare repository) under that folder: main's files.
      const remote = join(repo, 'remote.git');
      execFileSync('git', ['clone', '-q', '--bare', repo, remote]);
      const fromRemote = await call<{ taskType: string; ownedFiles: string[] }>(client, 'suggest_task_metadata', { title: 'Document the setup', repoPath: 'remote.git' });
      expect(fromRemote.body).toMatchObject({ taskType: 'docs', ownedFiles: ['docs/setup.md'] });
      // Elsewhere, with no daemon to say which projects there are: refused, saying so.
      const elsewhere = await call<{ error: { code: string; message: string } }>(client, 'suggest_task_metadata', { title: 'Document the setup', repoPath: gitRepo() });
      expect(elsewhere.body.error.message).toContain('(the daemon did not answer to say which there are)');
      const listed = await call<{ error: { code: string; message: string } }>(client, 'list_tasks', {});
      expect(listed.isError).toBe(true);
      expect(listed.body.error.code).toBe('DAEMON_UNREACHABLE');
      expect(listed.body.error.message).toContain('maestro serve');
    } finally {
      await client.close();
    }
  }, budget(120_000));

  it('gives up on a daemon URL where something accepts and never answers, saying so, instead of holding the agent for 5 minutes', async () => {
    const silent = await silentServer();
    // The wait is a minute unless MAESTRO_READ_TIMEOUT says (env.test.ts): 2.5 s here, so the suite does not sit out a minute.
    const client = await connect(`http://127.0.0.1:${silent.port}`, undefined, ROOT, { MAESTRO_READ_TIMEOUT: '2.5' });
    try {
      // The agent's host waits longer than the tool, as a patient one would.
      const r = (await client.callTool({ name: 'list_tasks', arguments: {} }, undefined, { timeout: budget(60_000) })) as CallResult;
      expect(r.isError).toBe(true);
      const { error } = JSON.parse(r.content[0]!.text) as { error: { code: string; message: string } };
      expect(error.code).toBe('DAEMON_UNREACHABLE');
      expect(error.message).toContain('it accepted the connection but sent no answer within 2.5 s');
    } finally {
      await client.close();
      await silent.close();
    }
  }, budget(120_000));

  it('says so on stderr and exits as failed when a message is over the SDK\'s 10 MB, instead of ending as if the host hung up', () => {
    const r = spawnSync(process.execPath, [...maestroArgs(), 'mcp', '--knowledge-only', '--root', tempDir('maestro-mcp-root-')], {
      input: `${'x'.repeat(11 * 1024 * 1024)}\n`,
      env: cleanEnv({}),
      encoding: 'utf8',
      timeout: budget(60_000),
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('maestro mcp stopped: a message was longer than the MCP SDK reads (ReadBuffer exceeded maximum size of 10485760 bytes)');
  });
});
