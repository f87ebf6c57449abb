/**
 * Which agent tools are installed and logged in, as `maestro doctor` and
 * GET /api/agents tell it: the fake tools on PATH, credentials by variable,
 * by the file a login writes, or by the tool's own status command.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectAgents, type AgentToolStatus } from '../../src/agents/detect.js';
import { cliFor, cliJson, cleanEnv, gitRepo } from '../cli/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { FAKES, fakeBin } from './fakes/bin.js';

let daemon: TestDaemon | null = null;
afterEach(async () => {
  await daemon?.stop();
  daemon = null;
  removeTempDirs();
});

/** A PATH folder holding only node (the fakes run on it), so tools installed on this machine stay out of sight. */
function nodeOnly(): string {
  const dir = tempDir('maestro-node-only-');
  symlinkSync(process.execPath, join(dir, 'node'));
  return dir;
}

/** An environment with only the fake tools and node on PATH, and an empty home. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const root = tempDir('maestro-detect-');
  const home = join(root, 'home');
  mkdirSync(home);
  return { PATH: `${fakeBin(root)}:${nodeOnly()}`, HOME: home, ...extra };
}

const byKind = (list: AgentToolStatus[]) => Object.fromEntries(list.map((a) => [a.kind, a]));

describe('detectAgents', () => {
  it('finds nothing installed on an empty PATH, and says how to get each', async () => {
    const found = byKind(await detectAgents({ PATH: tempDir('maestro-empty-path-'), HOME: tempDir('maestro-home-') }));
    for (const kind of ['codex', 'gemini', 'cursor', 'opencode']) expect(found[kind]).toMatchObject({ installed: false, path: null, loggedIn: null });
    expect(found.gemini!.detail).toBe('not installed (no gemini on PATH)');
    expect(found.claude).toMatchObject({ installed: true, loggedIn: false });
  });

  it('tells logged in from a credential variable, a credential file, or the tool\'s status command', async () => {
    const e = env({ GOOGLE_API_KEY: 'test-key' }); // gemini's; GEMINI_API_KEY would count for opencode too
    mkdirSync(join(e.HOME!, '.local', 'share', 'opencode'), { recursive: true });
    writeFileSync(join(e.HOME!, '.local', 'share', 'opencode', 'auth.json'), '{}');
    const found = byKind(await detectAgents(e));
    expect(found.gemini).toMatchObject({ installed: true, loggedIn: true, detail: 'GOOGLE_API_KEY is set' });
    expect(found.gemini!.path).toBe(join(e.PATH!.split(':')[0]!, 'gemini'));
    expect(found.opencode).toMatchObject({ installed: true, loggedIn: true, detail: `login found in ${join(e.HOME!, '.local', 'share', 'opencode', 'auth.json')}` });
    expect(found.codex).toMatchObject({ installed: true, loggedIn: true, detail: '`codex login status`: Logged in using ChatGPT' });
    expect(found.cursor).toMatchObject({ installed: true, loggedIn: true, detail: '`cursor-agent status`: Logged in as fake@example.com' });
  });

  it('finds Cursor under its newer name `agent` when there is no cursor-agent', async () => {
    const dir = tempDir('maestro-agent-name-');
    symlinkSync(FAKES.cursor, join(dir, 'agent'));
    const found = byKind(await detectAgents({ PATH: `${dir}:${nodeOnly()}`, HOME: tempDir('maestro-home-') }));
    expect(found.cursor).toMatchObject({ installed: true, executable: 'agent', path: join(dir, 'agent'), loggedIn: true, detail: '`agent status`: Logged in as fake@example.com' });
  });

  it('reports a tool that is installed but logged out, with the way to log in', async () => {
    const found = byKind(await detectAgents(env({ FAKE_AGENT_LOGGED_IN: '0' })));
    expect(found.codex).toMatchObject({ installed: true, loggedIn: false, detail: 'not logged in (Not logged in): run `codex login` (or set OPENAI_API_KEY)' });
    // cursor-agent status exits 0 and says it in words.
    expect(found.cursor).toMatchObject({ installed: true, loggedIn: false });
    expect(found.gemini).toMatchObject({ installed: true, loggedIn: false, detail: expect.stringContaining('GEMINI_API_KEY') });
  });
});

describe('detection for users', () => {
  it('GET /api/agents answers for the environment the workers get', async () => {
    daemon = await startTestDaemon({}, { noOrchestrator: true, workerEnv: env({ CURSOR_API_KEY: 'k' }) });
    const res = await daemon.app.inject({ method: 'GET', url: '/api/agents' });
    expect(res.statusCode).toBe(200);
    const found = byKind((res.json() as { agents: AgentToolStatus[] }).agents);
    expect(Object.keys(found).sort()).toEqual(['claude', 'codex', 'cursor', 'gemini', 'opencode']);
    expect(found.cursor).toMatchObject({ installed: true, loggedIn: true, detail: 'CURSOR_API_KEY is set' });
  });

  it('maestro doctor lists each agent CLI: installed, logged in, or neither', async () => {
    const e = env({ FAKE_AGENT_LOGGED_IN: '0', OPENAI_API_KEY: 'sk-test' });
    const { body } = await cliJson<{ checks: Array<{ name: string; status: string; detail: string }> }>(['doctor', '--url', 'http://127.0.0.1:9'], { ...cleanEnv(), ...e });
    const checks = Object.fromEntries(body.checks.map((c) => [c.name, c]));
    expect(checks['agent codex']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^Codex CLI at .*\/codex; logged in \(OPENAI_API_KEY is set\)$/) });
    expect(checks['agent cursor']).toMatchObject({ status: 'warn', detail: expect.stringContaining('NOT logged in') });
    const bare = await cliJson<{ checks: Array<{ name: string; status: string; detail: string }> }>(['doctor', '--url', 'http://127.0.0.1:9'], { ...cleanEnv(), PATH: nodeOnly() });
    expect(bare.body.checks.find((c) => c.name === 'agent opencode')).toEqual({ name: 'agent opencode', status: 'ok', detail: 'OpenCode is not installed (no opencode on PATH; optional)' });
  });

  it('maestro project add offers the tools the daemon can run, and warns about a chosen one that cannot run yet', async () => {
    daemon = await startTestDaemon({}, { noOrchestrator: true, workerEnv: env({ OPENAI_API_KEY: 'sk-test', FAKE_AGENT_LOGGED_IN: '0' }) });
    const { cli } = cliFor(daemon.config.home);
    const url = ['--url', daemon.url];
    const plain = await cli(['project', 'add', gitRepo(), '--name', 'plain', ...url]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^Added project plain .*\nAgent tools the daemon can run:\n  codex +Codex CLI +ready \(OPENAI_API_KEY is set\)\n/);
    expect(plain.stdout).toMatch(/\n  gemini +Gemini CLI +installed, not logged in: no login found/);
    expect(plain.stdout).toContain('Give it one: maestro project config set provider.kind <kind> --project plain');
    const chosen = await cli(['project', 'add', gitRepo(), '--name', 'gem', '--provider', 'gemini', ...url]);
    expect(chosen.code).toBe(0);
    expect(chosen.stdout).toContain('with the gemini agent\nNote: Gemini CLI is not logged in where the daemon runs: no login found: run `gemini` once');
    expect((await daemon.store.projects.get('gem')).config).toEqual({ provider: { kind: 'gemini' } });
    const tiers = await cli(['project', 'config', 'set', 'provider.models.hard', 'pro', 'provider.permissions.acceptEdits', '["--approval-mode","auto_edit"]', '--project', 'gem', ...url]);
    expect(tiers.code).toBe(0);
    expect((await daemon.store.projects.get('gem')).config).toEqual({ provider: { kind: 'gemini', models: { hard: 'pro' }, permissions: { acceptEdits: ['--approval-mode', 'auto_edit'] } } });
    const typo = await cli(['project', 'config', 'set', 'provider.permissions.acceptEdit', '["--yolo"]', '--project', 'gem', ...url]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/provider\.permissions: Unrecognized key: "acceptEdit"/);
  });

  it('a task is refused at once when its project\'s tool is not where the daemon can run it', async () => {
    daemon = await startTestDaemon({ tickMs: 60_000 }, { workerEnv: env() });
    const d = daemon;
    const post = async (url: string, payload: object) => {
      const res = await d.app.inject({ method: 'POST', url, payload });
      return { status: res.statusCode, body: res.json() as Record<string, any> };
    };
    const project = async (name: string, provider: object) => (await post('/api/projects', { name, repoPath: gitRepo(), config: { provider } })).body.project.id as string;
    expect((await post('/api/tasks', { projectId: await project('oc', { kind: 'opencode' }), title: 'fine' })).status).toBe(201);
    const missing = await post('/api/tasks', { projectId: await project('gm', { kind: 'gemini', env: { PATH: nodeOnly() } }), title: 'no gemini' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('Project gm cannot run tasks: its agent is gemini, but Gemini CLI is not installed where the daemon runs (no gemini on PATH)');
    const wrong = await post('/api/tasks', { projectId: await project('cx', { kind: 'codex', executable: '/nowhere/codex' }), title: 'no codex' });
    expect(wrong.body.error.message).toContain('its Codex CLI executable /nowhere/codex does not exist or is not executable');
    expect(await d.store.tasks.list({})).toHaveLength(1);
  });
});
