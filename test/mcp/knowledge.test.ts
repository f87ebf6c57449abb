/**
 * Issue 16 item 8: the project's knowledge through MCP, driven by the MCP
 * SDK's own client over stdio — once as a person's Claude Code would start
 * `maestro mcp --root <project>`, once with exactly the server configuration
 * the claude provider hands the Agent SDK for a run.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KNOWLEDGE_MCP_TOOLS, knowledgeMcp } from '../../src/agents/knowledgeMcp.js';
import { readLedger } from '../../src/knowledge/lifecycle/ledger/ledger.js';
import { createRun, createSession, runDir, sessionLedgerPath } from '../../src/knowledge/lifecycle/session/store.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { project } from '../helpers/knowledge2.js';
import { ROOT, cleanEnv } from '../cli/helpers.js';
import { maestroArgs } from '../helpers/maestro.js';

afterEach(() => removeTempDirs());

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

async function connect(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command, args, cwd: ROOT, env, stderr: 'pipe' });
  const client = new Client({ name: 'maestro-knowledge-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type CallResult = { isError?: boolean; content: { type: string; text: string }[] };
async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: T }> {
  const r = (await client.callTool({ name, arguments: args })) as CallResult;
  return { isError: Boolean(r.isError), body: JSON.parse(r.content[0]!.text) as T };
}

describe('knowledge over MCP', () => {
  it('searches, loads and stages through `maestro mcp --root` (a person\'s own Claude Code)', async () => {
    const p = project();
    createSession(p.root, 's-1');
    const client = await connect(process.execPath, [...maestroArgs(), 'mcp', '--root', p.dir, '--agent', 'none'], stringEnv(cleanEnv()));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['search_knowledge', 'load_knowledge', 'stage_knowledge']));

    const found = await call<{ count: number; results: Array<{ id: string; name: string; status: string }> }>(client, 'search_knowledge', { query: 'retry backoff jitter' });
    expect(found.isError).toBe(false);
    expect(found.body.results[0]).toMatchObject({ id: 'spec:project:coding-conventions-002', name: 'Retry budget', status: 'active' });

    const loaded = await call<{ entry: { id: string; sid: string; body: string } }>(client, 'load_knowledge', { id: 'S-20260102-bbbb' });
    expect(loaded.body.entry).toMatchObject({ id: 'spec:project:coding-conventions-002', sid: 'S-20260102-bbbb' });
    expect(loaded.body.entry.body).toMatch(/at most three times/);

    const none = await call<{ count: number; noMatch: string }>(client, 'search_knowledge', { query: 'the of and' });
    expect(none.body).toMatchObject({ count: 0, noMatch: expect.stringMatching(/^No entry matches/) });

    const unknown = await call<{ error: { code: string; message: string } }>(client, 'load_knowledge', { id: 'S-20990101-zzzz' });
    expect(unknown.isError).toBe(true);
    expect(unknown.body.error.code).toBe('UNKNOWN_KNOWLEDGE_ID');

    // Outside a run, staging needs a session; with one, the candidate is pending in its ledger (never in the specs).
    const noSession = await call<{ error: { code: string } }>(client, 'stage_knowledge', { target: 'spec', title: 'Idempotent migrations', content: 'Database migrations are forward-only and idempotent.' });
    expect(noSession.body.error.code).toBe('BAD_INPUT');
    const staged = await call<{ candidate_id: string; status: string }>(client, 'stage_knowledge', { target: 'spec', title: 'Idempotent migrations', content: 'Database migrations are forward-only and idempotent.', category: 'arch', session: 's-1' });
    expect(staged.body).toMatchObject({ candidate_id: expect.stringMatching(/^KDC-[a-f0-9]{16}$/), status: 'pending' });
    expect(readLedger(sessionLedgerPath(p.root, 's-1'))!.candidates.map((c) => c.candidate_id)).toEqual([staged.body.candidate_id]);
  });

  it('the claude provider\'s server configuration starts a server whose loads and stages land in the run', async () => {
    const p = project();
    createSession(p.root, 's-run');
    createRun(p.root, 's-run', { runId: 'run-1' });
    const dir = runDir(p.root, 's-run', 'run-1');
    const cfg = knowledgeMcp(p.dir, { ...cleanEnv(), MAESTRO_RUN_DIR: dir, MAESTRO_FROM_SOURCE: '1', MAESTRO_TOKEN: 'secret-not-for-agents' });
    expect(cfg.allowedTools).toEqual(KNOWLEDGE_MCP_TOOLS);
    const server = cfg.servers.maestro!;
    expect(server.args).toEqual([expect.stringMatching(/bin\/maestro\.js$/), 'mcp', '--knowledge-only', '--root', p.dir]);
    // Only what the server needs: never the daemon's token.
    expect(Object.keys(server.env ?? {})).not.toContain('MAESTRO_TOKEN');
    const client = await connect(server.command, server.args!, server.env!);
    // The knowledge tools and nothing that reaches the daemon: no create_task, list_tasks, approve.
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['load_knowledge', 'search_knowledge', 'stage_knowledge']);

    await call(client, 'load_knowledge', { id: 'spec:project:coding-conventions-001' });
    const staged = await call<{ candidate_id: string; ledger: string }>(client, 'stage_knowledge', { target: 'spec', title: 'Pin images', content: 'Container builds pin base images by digest.', category: 'arch' });
    expect(staged.isError).toBe(false);
    const ledger = readLedger(join(dir, 'knowledge-delta.json'))!;
    expect(ledger.candidates.map((c) => c.candidate_id)).toEqual([staged.body.candidate_id]);
    expect(ledger.inputs).toEqual([expect.objectContaining({ knowledge_id: 'spec:project:coding-conventions-001', signal: 'consumed', source: 'load' })]);
  });

  it("a run's server stages into the run folder the worker named under a daemon with another home, and refuses a run link planted elsewhere", async () => {
    const p = project();
    createSession(p.root, 's-run');
    // The daemon's home is not the default, and the agent is not told it: only its run folder.
    const own = join(tempDir('maestro-daemon-home-'), 'runs', 'task-1', 'r-1');
    createRun(p.root, 's-run', { runId: 'run-1', linkTo: own });
    const server = knowledgeMcp(p.dir, { ...cleanEnv(), MAESTRO_RUN_DIR: own, MAESTRO_FROM_SOURCE: '1' }).servers.maestro!;
    expect(Object.keys(server.env ?? {})).not.toContain('MAESTRO_HOME');
    const client = await connect(server.command, server.args!, server.env!);
    const stageIt = () => call<{ candidate_id: string; error: { code: string; message: string } }>(client, 'stage_knowledge', { target: 'spec', title: 'Pin images', content: 'Container builds pin base images by digest.', category: 'arch' });
    const staged = await stageIt();
    expect(staged.isError).toBe(false);
    expect(readLedger(join(own, 'knowledge-delta.json'))!.candidates.map((c) => c.candidate_id)).toEqual([staged.body.candidate_id]);

    // The repository replaces the link with one to a folder of its choosing (holding a run.json, so the run reads).
    const elsewhere = join(tempDir('maestro-elsewhere-'), 'run-1');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'run.json'), readFileSync(join(own, 'run.json'), 'utf8'));
    const link = runDir(p.root, 's-run', 'run-1');
    rmSync(link);
    symlinkSync(elsewhere, link);
    const refused = await stageIt();
    expect(refused.isError).toBe(true);
    expect(refused.body.error.code).toBe('PATH_OUTSIDE_PROJECTS');
    expect(refused.body.error.message).toContain(`Refusing to write ${link}: ${link} is a symbolic link leading to ${elsewhere}, outside the project's ${p.root.workflowDir}`);
    expect(refused.body.error.message).toContain(`(nor this run's own folder ${own}, $MAESTRO_RUN_DIR). A run folder is read and written only there. Nothing was written.`);
    expect(readdirSync(elsewhere)).toEqual(['run.json']);
  });

  it('a load in a run whose run.json does not read answers the entry, and a warning naming the file; nothing is recorded', async () => {
    const p = project();
    createSession(p.root, 's-run');
    createRun(p.root, 's-run', { runId: 'run-1' });
    const dir = runDir(p.root, 's-run', 'run-1');
    writeFileSync(join(dir, 'run.json'), 'null');
    const server = knowledgeMcp(p.dir, { ...cleanEnv(), MAESTRO_RUN_DIR: dir, MAESTRO_FROM_SOURCE: '1' }).servers.maestro!;
    const client = await connect(server.command, server.args!, server.env!);
    const loaded = await call<{ entry: { sid: string }; warning: string }>(client, 'load_knowledge', { id: 'S-20260102-bbbb' });
    expect(loaded.isError).toBe(false);
    expect(loaded.body.entry.sid).toBe('S-20260102-bbbb');
    expect(loaded.body.warning).toBe(`The load is not recorded as consumed in the run: ${join(dir, 'run.json')}: must hold a JSON object, found null.`);
    expect(readFileSync(join(dir, 'run.json'), 'utf8')).toBe('null');
    expect(existsSync(join(dir, 'knowledge-delta.json'))).toBe(false);
    // A stage there is refused naming the file (it crashed on null, and [] staged nowhere as "not in a run").
    for (const text of ['null', '[]']) {
      writeFileSync(join(dir, 'run.json'), text);
      const staged = await call<{ error: { code: string; message: string } }>(client, 'stage_knowledge', { target: 'spec', title: 'Pin images', content: 'Container builds pin base images by digest.', category: 'arch' });
      expect(staged.isError).toBe(true);
      expect(staged.body.error).toMatchObject({ code: 'CORRUPT_FILE', message: `${join(dir, 'run.json')}: must hold a JSON object, found ${text}.` });
      expect(readFileSync(join(dir, 'run.json'), 'utf8')).toBe(text);
      expect(existsSync(join(dir, 'knowledge-delta.json'))).toBe(false);
    }
  });
});
