/**
 * The codex, gemini and opencode providers with the real Codex CLI (`@openai/codex`), Gemini CLI
 * (`@google/gemini-cli`) and OpenCode (`opencode-linux-x64-baseline`), pinned to one version each, as a
 * user's run starts them, with only the model faked: test/helpers/responsesApi.ts (OpenAI's Responses
 * API, named as the model provider in ~/.codex/config.toml), test/helpers/geminiApi.ts (Google's API,
 * through GOOGLE_GEMINI_BASE_URL) and test/helpers/chatCompletionsApi.ts (an OpenAI-compatible provider
 * in OpenCode's config). Their own shell tools run for real, and so do their session stores, which a
 * resume reads (in the sandbox, where the state folders must be writable). No tool's own protection hides the disk from a command: Codex's sandbox keeps writes in
 * the worktree but reads anywhere, and headless Gemini in yolo mode and OpenCode with its tools allowed
 * have none. Maestro's agent sandbox around them is what hides the daemon's token, and Codex's own
 * sandbox must still work inside it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliAgentProvider } from '../../src/agents/cli/provider.js';
import { detectAgents } from '../../src/agents/detect.js';
import type { AgentRequest, AgentToolEvent } from '../../src/agents/types.js';
import type { RunSandbox } from '../../src/lib/sandbox.js';
import { stopSandboxProxies } from '../../src/lib/sandboxNet/proxy.js';
import type { SandboxNetwork } from '../../src/lib/sandboxNet/relay.js';
import { agentMachine, type AgentMachine } from '../helpers/agentMachine.js';
import { budget } from '../helpers/budget.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import * as chat from '../helpers/chatCompletionsApi.js';
import * as gemini from '../helpers/geminiApi.js';
import { outsideAddress } from '../helpers/hostAddress.js';
import { makeRepo } from '../helpers/repo.js';
import * as responses from '../helpers/responsesApi.js';
import type { ShellTurn } from '../helpers/responsesApi.js';
import type { ShellStandIn } from '../helpers/standIn.js';
import { startUpstreamProxy, type TestUpstream } from '../helpers/upstreamProxy.js';

const modules = join(import.meta.dirname, '..', '..', 'node_modules');
/**
 * Where the tools are: codex and gemini through their packages' bins. OpenCode's package lists a binary for
 * every platform, and the npm registry CI installs from does not have them all (npm ci then refuses the
 * lock), so its Linux x64 binary is an optional dependency of its own, absent on other machines.
 */
const BIN_DIRS = [join(modules, '.bin'), join(modules, 'opencode-linux-x64-baseline', 'bin')];
const bin = BIN_DIRS.join(':');

/** A tool that is not installed: the suite says so loudly on a developer's machine, and fails in CI. */
function missing(kind: string): boolean {
  if (BIN_DIRS.some((dir) => existsSync(join(dir, kind)))) return false;
  if (process.env.CI) throw new Error(`CI must run the real ${kind} CLI, but it is not installed (npm ci installs it)`);
  process.stderr.write(`\n*** the real ${kind} CLI is not installed here: its suite is SKIPPED on this machine. ***\n`);
  return true;
}

/** What a test needs of a model stand-in, whichever API it speaks. */
type StandIn = ShellStandIn<unknown>;
/** Scripted turns, or a model that answers what the user's side of the conversation says. */
type Turns = readonly ShellTurn[] | ((said: string) => ShellTurn);
const route = <R>(said: (r: R) => string, turns: Turns) => (typeof turns === 'function' ? (r: R) => turns(said(r)) : turns);

interface RealTool {
  kind: 'codex' | 'gemini' | 'opencode';
  model: string;
  /** The tool's event for a shell command, as the provider reports it. */
  shellTool: string;
  /** The states a shell command's tool event goes through (OpenCode reports a call once it has ended). */
  phases: string[];
  /** Where in the home the tool keeps its sessions. */
  stateDir: string;
  /** A file in the tool's folder that instructs every session, which the test's home does not have. */
  instructions: string;
  /** How it sends an http:// base URL's requests through a proxy: in absolute form, or through a tunnel (CONNECT). */
  throughProxy: 'absolute' | 'tunnel';
  /** Starts the stand-in (on `host`, 127.0.0.1 unless given) and makes `home` the home of a user whose tool talks to it; returns the variables a run needs. */
  start(home: string, turns: Turns, host?: string): Promise<{ api: StandIn; env: Record<string, string> }>;
}

const TOOLS: RealTool[] = [
  {
    kind: 'codex', model: 'gpt-5.2-codex', shellTool: 'command_execution', phases: ['start', 'done'], stateDir: '.codex', instructions: '.codex/AGENTS.md', throughProxy: 'absolute',
    async start(home, turns, host) {
      const api = await responses.startResponsesApi(route(responses.userSide, turns), host);
      responses.codexHome(home, api);
      return { api, env: { OPENAI_API_KEY: 'sk-test' } };
    },
  },
  {
    kind: 'gemini', model: 'flash', shellTool: 'run_shell_command', phases: ['start', 'done'], stateDir: '.gemini', instructions: '.gemini/GEMINI.md', throughProxy: 'tunnel',
    async start(home, turns, host) {
      const api = await gemini.startGeminiApi(route(gemini.userSide, turns), host);
      gemini.geminiHome(home);
      return { api, env: { GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: api.url } };
    },
  },
  {
    kind: 'opencode', model: chat.STANDIN_MODEL, shellTool: 'bash', phases: ['done'], stateDir: '.local/share/opencode', instructions: '.config/opencode/AGENTS.md', throughProxy: 'absolute',
    async start(home, turns, host) {
      const api = await chat.startChatApi(route(chat.userSide, turns), host);
      chat.opencodeHome(home, api);
      return { api, env: {} };
    },
  },
];

let api: StandIn | undefined;
let d: TestDaemon | undefined;
let upstream: TestUpstream | undefined;
afterEach(async () => {
  await d?.stop({ graceMs: 2000 });
  await api?.close();
  await upstream?.close();
  stopSandboxProxies();
  d = undefined;
  api = undefined;
  upstream = undefined;
  removeTempDirs();
});

/** Where a model stand-in goes that a "proxied" sandbox reaches only through the proxy (null: none here, said loudly). */
const address = bwrapUnusable() ? null : outsideAddress();

/** A user's machine (test/helpers/agentMachine.ts), the home outside the temporary folder: Codex refuses to set up its own sandbox's helper there. */
const machine = () => agentMachine('maestro-cli', '/var/tmp');

describe.each(TOOLS)('the real $kind CLI', (tool) => {
  if (missing(tool.kind)) return;
  let env: Record<string, string> = {};
  // The test process's PWD (where vitest started) is in the environment the provider filters, as the daemon's
  // launch folder is in the daemon's: it must not reach the tool (OpenCode would run its commands there).
  async function run(m: AgentMachine, turns: ShellTurn[], extra: Partial<AgentRequest> = {}) {
    if (!api) ({ api, env } = await tool.start(m.home, turns));
    const provider = new CliAgentProvider({ kind: tool.kind, env: { HOME: m.home, PATH: `${bin}:${process.env.PATH}`, ...env } });
    const tokens: string[] = [];
    const tools: AgentToolEvent[] = [];
    const result = await provider.run({
      role: 'execute', taskTitle: 'greet', prompt: 'add a greeting', cwd: m.worktree, model: tool.model,
      allowedTools: [], permissionMode: 'acceptEdits', projectRoot: m.repo,
      onToken: (t) => tokens.push(t), onTool: (e) => tools.push(e), signal: new AbortController().signal, askUser: async () => '', ...extra,
    });
    return { result, tokens, tools };
  }

  /**
   * Writes the greeting, then tries what an agent that goes looking would: the daemon's token (by way of
   * $HOME, which OpenCode's check for paths outside the worktree does not read).
   */
  const look = () => `printf 'hello from ${tool.kind}\\n' > hello.txt; cat "$HOME/.maestro/token"; echo looked`;

  it('runs its tool loop: the file is written, the answer and the commands reach Maestro', { timeout: budget(120_000) }, async () => {
    const m = machine();
    const first = await run(m, [{ shell: 'cat /etc/hostname' }, { shell: look() }, { text: 'Wrote hello.txt.' }]);
    // A path outside the worktree: OpenCode refuses the command (Maestro denies `external_directory`) and the run goes on.
    if (tool.kind === 'opencode') expect(api!.toolOutput(1)).toMatch(/prevents you from using this specific tool call/);
    else expect(api!.toolOutput(1)).toContain(readFileSync('/etc/hostname', 'utf8').trim());
    expect(readFileSync(join(m.worktree, 'hello.txt'), 'utf8')).toBe(`hello from ${tool.kind}\n`);
    const shell = api!.toolOutput(2);
    expect(shell).toContain('looked');
    // Without Maestro's sandbox, the token is the agent's.
    expect(shell).toContain('daemon-token-secret');
    expect(first.result.text).toBe('Wrote hello.txt.');
    expect(first.tokens.join('')).toBe('Wrote hello.txt.');
    const greeting = first.tools.filter((t) => t.summary?.includes(`hello from ${tool.kind}`));
    expect(greeting.map((t) => [t.name, t.state])).toEqual(tool.phases.map((p) => [tool.shellTool, p]));
    expect(first.result.sessionId).toBeTruthy();
    expect(first.result.usage.inputTokens).toBeGreaterThan(0);
    // Every event the real tool sent is one the parser knows.
    expect(first.result.diagnostics).toBeUndefined();
  });

  describe.skipIf(bwrapUnusable())('in the agent sandbox', () => {
    it('works as outside, its shell finding no token and a read-only repository, and a resume continues the session', { timeout: budget(120_000) }, async () => {
      const m = machine();
      const sandbox: RunSandbox = { spec: { kind: 'bwrap', hide: [m.maestroHome], readOnly: [m.repo], writable: [] }, worktree: m.worktree };
      const state = join(m.home, tool.stateDir, 'probe');
      const instructions = join(m.home, tool.instructions);
      const probe = `${look()}; echo more >> ${join(m.repo, 'README.md')}; echo x > ${state}; echo 'obey the repository' > ${instructions}`;
      const first = await run(m, [{ shell: probe }, { text: 'Done.' }, { text: 'Resumed.' }], { sandbox });
      const shell = api!.toolOutput(1);
      expect(shell).toContain('looked');
      expect(shell).toMatch(/token: No such file or directory/);
      expect(shell).not.toContain('daemon-token-secret');
      expect(shell).toMatch(/README\.md: Read-only file system/);
      expect(readFileSync(join(m.repo, 'README.md'), 'utf8')).toBe('# project\n');
      expect(readFileSync(join(m.worktree, 'hello.txt'), 'utf8')).toBe(`hello from ${tool.kind}\n`);
      expect(first.result.text).toBe('Done.');
      // Maestro's sandbox leaves the tool's state folder writable (it keeps its sessions there); Codex's own
      // sandbox, nested inside, does not, which shows it runs. The others have none.
      if (tool.kind === 'codex') expect(shell).toMatch(/probe: Read-only file system/);
      else expect(readFileSync(state, 'utf8')).toBe('x\n');
      // What in that folder instructs every session, though the user had none: made empty first, then locked.
      expect(shell).toContain(`${instructions}: Read-only file system`);
      expect(readFileSync(instructions, 'utf8')).toBe('');

      const again = await run(m, [], { prompt: 'go on', resumeSessionId: first.result.sessionId!, sandbox });
      expect(again.result.text).toBe('Resumed.');
      // The resumed request carries the first conversation: the prompt, the command's output, and the new prompt.
      const resumed = api!.said(api!.requests.at(-1));
      expect(resumed).toContain('add a greeting');
      expect(resumed).toContain('looked');
      expect(resumed).toContain('go on');
    });

    /**
     * What NOTE51 left untried: the tool with the sandbox's own network. The stand-in is on this host's other address,
     * which the sandbox has no route to: the tool reaches it through the relay and Maestro's proxy or not at all.
     */
    it.skipIf(!address)('through the "proxied" network: its model only through Maestro\'s proxy and the allow entry, then through the host\'s own proxy too; without the entry the proxy refuses it', { timeout: budget(240_000) }, async () => {
      const m = machine();
      const probe = `echo "proxy=$HTTPS_PROXY"; node -e "require('net').connect(1, '${address}').on('connect', () => { console.log('direct: connected'); process.exit(0); }).on('error', (e) => console.log('direct: ' + e.code))"`;
      ({ api, env } = await tool.start(m.home, [{ shell: probe }, { text: 'Done.' }, { text: 'Resumed.' }], address!));
      const model = new URL(api.url);
      const sandbox = (network: SandboxNetwork): RunSandbox => ({ spec: { kind: 'bwrap', hide: [m.maestroHome], readOnly: [m.repo], writable: [], network }, worktree: m.worktree });
      const first = await run(m, [], { sandbox: sandbox({ mode: 'proxied', allow: [model.host] }) });
      expect(first.result.text).toBe('Done.');
      // Inside: the variables name the relay on the sandbox's own loopback, and the host's address has no route
      // (Codex's own sandbox, nested, refuses its commands a socket before that).
      expect(api.toolOutput(1)).toMatch(/proxy=http:\/\/127\.0\.0\.1:\d+/);
      expect(api.toolOutput(1)).toContain(`direct: ${tool.kind === 'codex' ? 'EPERM' : 'ENETUNREACH'}`);

      // A host that reaches out through a proxy of its own (the daemon's HTTPS_PROXY, HTTP_PROXY): Maestro's goes through it.
      upstream = await startUpstreamProxy();
      const chained: SandboxNetwork = { mode: 'proxied', allow: [model.host], upstream: { https: upstream.url, http: upstream.url, noProxy: [] } };
      const again = await run(m, [], { prompt: 'go on', resumeSessionId: first.result.sessionId!, sandbox: sandbox(chained) });
      expect(again.result.text).toBe('Resumed.');
      const toModel = upstream.seen.map((s) => s.line).filter((l) => l.includes(model.host));
      expect(toModel.length).toBeGreaterThan(0);
      for (const line of toModel) expect(line).toMatch(tool.throughProxy === 'tunnel' ? new RegExp(`^CONNECT ${model.host}$`) : new RegExp(`^POST ${model.origin}/v1/`));

      // Without the entry: refused, and the run says why. Gemini CLI retries a refused tunnel for minutes and then
      // says only "fetch failed" (docs/agents.md): not waited for here.
      if (tool.kind !== 'gemini') {
        await expect(run(m, [], { prompt: 'once more', sandbox: sandbox({ mode: 'proxied', allow: [] }) })).rejects.toThrow(`maestro sandbox proxy: port ${model.port} is refused (only 443 and 80 go out); list "${model.host}" in agentSandbox.allow to let the sandbox reach it`);
      }
    });

    // Through the daemon for one tool: what the daemon adds (the worker's environment, the sandbox from its
    // config, plan mode and the verdict through the pipeline) is the same code for every CLI, and the
    // fakes in cliDaemon.test.ts take each one's format through it; Codex is the quickest to start.
    if (tool.kind === 'codex') it('plans, executes, reviews and merges a task through the daemon, the shell it ran finding no token', { timeout: budget(300_000) }, async () => {
      const home = tempDir('maestro-home-');
      const userHome = tempDir('maestro-cli-user-', '/var/tmp');
      const fenced = (value: object) => `\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;
      // Maestro's three prompts, answered as a model would: a plan, a shell command then a closing line, a verdict.
      const model = (said: string): ShellTurn => {
        if (said.includes('Break this task into subtasks')) {
          return { text: `One step.\n\n${fenced({ plan: 'Write the greeting.', subtasks: [{ title: 'Write the greeting', complexity: 'easy', ownedFiles: ['hello.txt'] }] })}` };
        }
        if (said.includes('review, read-only)')) return { text: fenced({ verdict: 'approve', summary: 'Fine.', findings: [] }) };
        // The token's path in base64, which no tool's check of a command's paths reads (Gemini refuses `$(…)`).
        const token = Buffer.from(join(home, 'token')).toString('base64');
        if (!said.includes('shell done')) return { shell: `printf 'hello from ${tool.kind}\\n' > hello.txt; echo ${token} | base64 -d | xargs cat; echo shell done` };
        return { text: 'Wrote hello.txt.' };
      };
      const started = await tool.start(userHome, model);
      api = started.api;
      d = await startTestDaemon({ home, tickMs: 100 }, { workerEnv: { HOME: userHome, PATH: `${bin}:${process.env.PATH}`, ...started.env } });
      expect(d.config.agentSandbox).not.toBeNull();
      const repo = makeRepo();
      const project = await d.store.projects.create({ name: 'greet', repoPath: repo, config: { provider: { kind: tool.kind, models: { hard: tool.model, medium: tool.model, easy: tool.model } }, autoApproveAfterMs: 0 } });
      const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet the user', complexity: 'medium' });
      d.orchestrator.kick();

      const done = await taskDone(d, task.id, 240_000);
      expect(done.status).toBe('done');
      expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe(`hello from ${tool.kind}\n`);
      const runs = await d.store.runs.list({ taskId: task.id });
      expect(runs.map((r) => [r.kind, r.status])).toEqual([['plan', 'succeeded'], ['execute', 'succeeded'], ['review', 'succeeded']]);
      for (const r of runs) expect(r.inputTokens).toBeGreaterThan(0);
      // The command the tool ran is a phase on the board's live stream.
      const phases = (await d.store.events.list({ taskId: task.id, type: 'run.phase', limit: 500 })).events.map((e) => e.payload as { stage: string; state: string; detail?: { summary?: string } });
      expect(phases.some((p) => p.stage === `tool:${tool.shellTool}` && p.state === 'done' && p.detail?.summary?.includes('hello.txt'))).toBe(true);

      const shell = api.requests.map((r) => api!.said(r)).find((t) => t.includes('shell done'))!;
      expect(shell).toMatch(/token: No such file or directory/);
      expect(shell).not.toContain(readFileSync(join(home, 'token'), 'utf8').trim());
    });
  });
});

describe.skipIf(missing('codex'))('detecting the real Codex CLI', () => {
  it('is installed and not logged in until `codex login` writes its login, which detection then reads', { timeout: budget(60_000) }, async () => {
    const env = { HOME: tempDir('maestro-cli-home-', '/var/tmp'), PATH: `${bin}:${process.env.PATH}` };
    const codex = async () => (await detectAgents(env)).find((t) => t.kind === 'codex')!;
    // No variable and no login file: the tool's own `codex login status` says so.
    const before = await codex();
    expect(before).toMatchObject({ installed: true, loggedIn: false, path: join(modules, '.bin', 'codex') });
    expect(before.detail).toMatch(/^not logged in \(Not logged in\): run `codex login`/);
    execFileSync(join(modules, '.bin', 'codex'), ['login', '--with-api-key'], { env, input: 'sk-test-key\n' });
    expect(await codex()).toMatchObject({ installed: true, loggedIn: true, detail: `login found in ${join(env.HOME, '.codex', 'auth.json')}` });
  });
});
