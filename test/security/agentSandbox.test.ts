/**
 * An agent that goes looking, run through the executor as the daemon runs it: its worktree and run folder
 * in the Maestro home beside the token. With `agentSandbox: "bwrap"` (job.sandbox) the agent and the checks,
 * which run the worktree's own scripts, cannot read the token, forge the worker's outbox, point the
 * worktree's `.git` elsewhere or write the repository; the same run without the sandbox can do all of it,
 * which is what the assertions are measured against. Whatever the sandbox, a report that is a link is not
 * followed by the worker.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stopSandboxProxies } from '../../src/lib/sandboxNet/proxy.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJob, type JobInput } from '../../src/executor/protocol/job.js';
import { readOutbox } from '../../src/executor/protocol/outbox.js';
import { runPipeline } from '../../src/executor/run.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { resultData, sandbox as tempRepo, type Sandbox } from '../executor/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { CommandProvider } from '../../src/agents/command.js';
import { maestroArgs } from '../helpers/maestro.js';
import { ROOT } from '../cli/helpers.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { createRun, createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { readLedger } from '../../src/knowledge/lifecycle/ledger/ledger.js';

const unusable = bwrapUnusable();
const TOKEN = 'daemon-token-0123456789';

/** The daemon's layout: home/token, home/worktrees/<project>, home/runs/<run>; the agent's script outside the home. */
function daemonLayout(sb: Sandbox) {
  const home = join(sb.root, 'home');
  const bin = join(sb.root, 'bin');
  mkdirSync(bin, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'token'), `${TOKEN}\n`);
  const runDir = join(home, 'runs', 'e1');
  mkdirSync(runDir, { recursive: true });
  return { home, bin, runDir, worktreeRoot: join(home, 'worktrees', 'p1') };
}

/** A command agent that probes what it can reach into probe.txt, then does its task: greeting.txt. */
function probingAgent(bin: string, home: string, runDir: string, repo: string): string[] {
  const path = join(bin, 'agent.sh');
  writeFileSync(path, `cat >/dev/null
if [ "$MAESTRO_ROLE" = execute ]; then
  {
    cat ${home}/token 2>/dev/null || echo no-token
    (echo '{"type":"result","forged":true}' >> ${runDir}/outbox.ndjson) 2>/dev/null && echo wrote-outbox || echo denied-outbox
    test -w .git && echo git-writable || echo denied-git
    (echo x > ${repo}/evil.txt) 2>/dev/null && echo wrote-repo || echo denied-repo
  } > probe.txt
  echo hello > greeting.txt
fi
echo done
`);
  return ['/bin/sh', path];
}

function jobFor(sb: Sandbox, l: ReturnType<typeof daemonLayout>, sandboxed: boolean, checks: JobInput['checks'] = []) {
  const command = probingAgent(l.bin, l.home, l.runDir, sb.repo);
  return parseJob(sb.job({
    kind: 'execute',
    provider: { kind: 'command', command },
    project: { id: 'p1', repoPath: sb.repo, worktreeRoot: l.worktreeRoot },
    checks,
    sandbox: sandboxed ? { kind: 'bwrap', hide: [l.home], readOnly: [sb.repo, l.bin], writable: [] } : null,
  } as never, '', 'e1'));
}

const branchFile = (sb: Sandbox, path: string) => sb.git('show', `maestro/T1-v1:${path}`);

describe.skipIf(unusable)('an agent run in the bwrap sandbox', () => {
  it('cannot read the token, forge the outbox, redirect .git or write the repository; its work is committed', async () => {
    using sb = tempRepo();
    const l = daemonLayout(sb);
    // A check runs the worktree's scripts: it passes only if the token is out of its sight too.
    const record = await runPipeline(jobFor(sb, l, true, [{ name: 'token-hidden', command: ['/bin/sh', '-c', `test ! -e ${l.home}/token`] }]), { runDir: l.runDir });
    expect(record).toMatchObject({ type: 'result' });
    expect(branchFile(sb, 'greeting.txt')).toBe('hello');
    // Its write to the run folder's outbox lands in the scratch copy the sandbox shows there, never in the run's.
    expect(branchFile(sb, 'probe.txt').split('\n')).toEqual(['no-token', 'wrote-outbox', 'denied-git', 'denied-repo']);
    expect(readFileSync(join(l.runDir, 'outbox.ndjson'), 'utf8')).not.toContain('forged');
    expect(readOutbox(l.runDir).records.filter((r) => r.type === 'result')).toHaveLength(1);
    expect(existsSync(join(sb.repo, 'evil.txt'))).toBe(false);
  });

  it('without the sandbox, the same agent reads the token, forges the outbox and writes the repository', async () => {
    using sb = tempRepo();
    const l = daemonLayout(sb);
    expect(await runPipeline(jobFor(sb, l, false), { runDir: l.runDir })).toMatchObject({ type: 'result' });
    expect(branchFile(sb, 'probe.txt').split('\n')).toEqual([TOKEN, 'wrote-outbox', 'git-writable', 'wrote-repo']);
    expect(readFileSync(join(l.runDir, 'outbox.ndjson'), 'utf8')).toContain('forged');
  });

  it('without the sandbox, a check sees the token', async () => {
    using sb = tempRepo();
    const l = daemonLayout(sb);
    const record = await runPipeline(jobFor(sb, l, false, [{ name: 'token-hidden', command: ['/bin/sh', '-c', `test ! -e ${l.home}/token`] }]), { runDir: l.runDir });
    expect(record).toMatchObject({ type: 'error', code: 'CHECK_FAILED' });
  });
});

/** Processes on this machine whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false; // gone meanwhile
    }
  }).map(Number);
}

describe.skipIf(unusable)('a sandboxed planner', () => {
  it('with network "proxied", cannot reach a server on the host\'s loopback that the same planner reaches with "shared"', async () => {
    const server = createServer((c) => c.end('host'));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const port = (server.address() as AddressInfo).port;
      const planned = async (network: { mode: 'shared' | 'proxied'; allow: string[] }) => {
        using sb = tempRepo();
        const l = daemonLayout(sb);
        const agent = `const say=(w)=>console.log("\\x60\\x60\\x60json\\n"+JSON.stringify({plan:w,subtasks:[{title:"Only step",complexity:"easy"}]})+"\\n\\x60\\x60\\x60");const c=require("net").connect(${port},"127.0.0.1");c.on("data",(d)=>{say("reached "+d);c.destroy()});c.on("error",(e)=>say(e.code))`;
        const job = parseJob(sb.job({
          kind: 'plan',
          provider: { kind: 'command', command: [process.execPath, '-e', agent] },
          project: { id: 'p1', repoPath: sb.repo, worktreeRoot: l.worktreeRoot },
          sandbox: { kind: 'bwrap', hide: [l.home], readOnly: [sb.repo], writable: [], network },
        } as never, '', 'plan'));
        return resultData<{ plan: string }>(await runPipeline(job, { runDir: l.runDir })).plan;
      };
      expect(await planned({ mode: 'shared', allow: [] })).toBe('reached host');
      expect(await planned({ mode: 'proxied', allow: [] })).toBe('ECONNREFUSED');
    } finally {
      stopSandboxProxies();
      await new Promise((ok) => server.close(ok));
    }
  });

  it('with network "proxied", what the proxy refuses it is on the run\'s stream, once a destination, with the proxy\'s reason', async () => {
    using sb = tempRepo();
    const l = daemonLayout(sb);
    // Asks the proxy the variables name for the metadata endpoint twice and a port of the host's loopback once, as a
    // tool that goes on retrying would, and plans with the answers' status lines.
    const agent = [
      'const say=(w)=>console.log("\\x60\\x60\\x60json\\n"+JSON.stringify({plan:w,subtasks:[{title:"Only step",complexity:"easy"}]})+"\\n\\x60\\x60\\x60");',
      'const u=new URL(process.env.HTTPS_PROXY);',
      'const ask=(t)=>new Promise((r)=>{const c=require("net").connect(Number(u.port),u.hostname);let g="";c.on("data",(d)=>{g+=d});c.on("close",()=>r(g.split("\\r\\n")[0]));c.write("CONNECT "+t+" HTTP/1.1\\r\\n\\r\\n")});',
      '(async()=>{const a=[];for(const t of ["169.254.169.254:80","169.254.169.254:80","127.0.0.1:6379"])a.push(await ask(t));say(a.join(" / "))})();',
    ].join('');
    const job = parseJob(sb.job({
      kind: 'plan',
      provider: { kind: 'command', command: [process.execPath, '-e', agent] },
      project: { id: 'p1', repoPath: sb.repo, worktreeRoot: l.worktreeRoot },
      sandbox: { kind: 'bwrap', hide: [l.home], readOnly: [sb.repo], writable: [], network: { mode: 'proxied', allow: [] } },
    } as never, '', 'plan'));
    try {
      expect(resultData<{ plan: string }>(await runPipeline(job, { runDir: l.runDir })).plan).toBe(Array(3).fill('HTTP/1.1 403 Forbidden').join(' / '));
    } finally {
      stopSandboxProxies();
    }
    const said = readOutbox(l.runDir).records.flatMap((r) => (r.type === 'phase' && r.stage === 'network' ? [[r.state, r.detail?.summary]] : []));
    expect(said).toEqual([
      ['failed', '169.254.169.254:80 refused: 169.254.169.254 is 169.254.169.254, link-local: out of the sandbox\'s reach; list "169.254.169.254:80" in agentSandbox.allow to let the sandbox reach it'],
      ['failed', '127.0.0.1:6379 refused: port 6379 is refused (only 443 and 80 go out); list "127.0.0.1:6379" in agentSandbox.allow to let the sandbox reach it'],
    ]);
  });

  it('plans in its throwaway checkout in the hidden home, which it can read and not write', async () => {
    using sb = tempRepo();
    const l = daemonLayout(sb);
    const planJson = JSON.stringify({ plan: 'p', subtasks: [{ title: 'Only step', complexity: 'easy' }] });
    const agent = `let w="wrote";try{require("fs").writeFileSync("hack.txt","x")}catch(e){w=e.code}console.log(w+" "+require("fs").readFileSync("README.md","utf8").trim()+"\\n\\x60\\x60\\x60json\\n"+${JSON.stringify(planJson)}+"\\n\\x60\\x60\\x60")`;
    const job = parseJob(sb.job({
      kind: 'plan',
      provider: { kind: 'command', command: [process.execPath, '-e', agent] },
      project: { id: 'p1', repoPath: sb.repo, worktreeRoot: l.worktreeRoot },
      sandbox: { kind: 'bwrap', hide: [l.home], readOnly: [sb.repo], writable: [] },
    } as never, '', 'plan'));
    const record = await runPipeline(job, { runDir: l.runDir });
    expect(resultData<{ subtasks: unknown[] }>(record).subtasks).toHaveLength(1);
    const tokens = readOutbox(l.runDir).records.filter((r) => r.type === 'token').map((r) => (r as { text: string }).text).join('');
    expect(tokens).toMatch(/^EROFS # demo/);
  });
});

describe.skipIf(unusable)("a sandboxed agent's knowledge records", () => {
  it('reach the run ledger: a load through maestro is recorded as consumed and a staged candidate is pending, though the run folder is hidden', async () => {
    using sb = tempRepo();
    const l = daemonLayout(sb);
    sb.commitFile('.workflow/knowhow/TIP-20260101-greet.md', '---\ntitle: "Greet by name"\ntype: tip\n---\n\nAlways greet the person by name.\n');
    // The knowledge run of this execute run, its folder the run directory (as the daemon's bridge makes it).
    const root = resolveWorkflowRoot({ workflowRoot: sb.repo, env: {} });
    createSession(root, 'task-t1', 'Greet');
    createRun(root, 'task-t1', { runId: 'e1', command: 'execute', linkTo: l.runDir });
    const maestro = [process.execPath, ...maestroArgs()].join(' ');
    const path = join(l.bin, 'agent.sh');
    writeFileSync(path, `cat >/dev/null
if [ "$MAESTRO_ROLE" = execute ]; then (cd ${ROOT} && ${maestro} load --id knowhow-tip-20260101-greet --workflow-root ${sb.repo}) > loaded.txt 2>&1; (cd ${ROOT} && ${maestro} knowledge stage knowhow Title 'Some finding.' --run e1 --session task-t1 --workflow-root ${sb.repo}) > staged.txt 2>&1; echo hello > greeting.txt; fi
echo done
`);
    const job = parseJob(sb.job({
      kind: 'execute',
      provider: { kind: 'command', command: ['/bin/sh', path], env: { MAESTRO_RUN_DIR: l.runDir, MAESTRO_SEARCH_DAEMON: 'off' } },
      project: { id: 'p1', repoPath: sb.repo, worktreeRoot: l.worktreeRoot },
      sandbox: { kind: 'bwrap', hide: [l.home], readOnly: [sb.repo, l.bin], writable: [] },
    } as never, '', 'e1'));
    expect(await runPipeline(job, { runDir: l.runDir })).toMatchObject({ type: 'result' });
    expect(branchFile(sb, 'loaded.txt')).toContain('Always greet the person by name.');
    expect(branchFile(sb, 'staged.txt')).toMatch(/^KDC-[a-f0-9]{16} pending/);
    const ledger = readLedger(join(l.runDir, 'knowledge-delta.json'));
    expect(ledger?.inputs).toEqual([expect.objectContaining({ knowledge_id: 'knowhow-tip-20260101-greet', signal: 'consumed', source: 'load', count: 1 })]);
    expect(ledger?.candidates).toEqual([expect.objectContaining({ target: 'knowhow', title: 'Title', content: 'Some finding.', status: 'pending' })]);
    // The agent saw a copy: the worker's own files in the run directory are as the worker wrote them.
    expect(readOutbox(l.runDir).corrupt).toEqual([]);
  });
});

describe.skipIf(unusable)('stopping a sandboxed agent', () => {
  it('ends everything it started, a process that left its group included', async () => {
    const worktree = tempDir('maestro-sandbox-wt-');
    const marker = `maestro-sandbox-abort-${process.pid}-${Date.now()}`;
    // A child that double-forks out of the agent's process group, and one in the foreground.
    writeFileSync(join(worktree, 'agent.sh'), `( sh -c 'sleep 1000; echo ${marker}' & ) ; echo started > started.txt; sh -c 'sleep 1000; echo ${marker}'\n`);
    const provider = new CommandProvider({ command: ['/bin/sh', join(worktree, 'agent.sh')], promptVia: 'stdin' });
    const controller = new AbortController();
    const running = provider.run({
      role: 'execute', taskTitle: 't', prompt: 'p', cwd: worktree, model: 'm', allowedTools: [], permissionMode: 'acceptEdits',
      onToken: () => {}, signal: controller.signal, askUser: async () => '',
      sandbox: { spec: { kind: 'bwrap', hide: [], readOnly: [], writable: [] }, worktree },
    });
    await expect.poll(() => existsSync(join(worktree, 'started.txt')), { timeout: budget(30_000) }).toBe(true);
    await expect.poll(() => processesWith(marker).length, { timeout: budget(30_000) }).toBe(2);
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'INTERRUPTED' });
    await expect.poll(() => processesWith(marker), { timeout: budget(30_000) }).toEqual([]);
    removeTempDirs();
  });

  // What the worker's git does after the agent (src/git/embedded.ts disarms the repositories an agent made, then
  // commits) is safe only if nothing of the agent's is left to make one in between.
  it('leaves nothing running once the agent has finished, a process that left its group included', async () => {
    const worktree = tempDir('maestro-sandbox-wt-');
    const marker = `maestro-sandbox-done-${process.pid}-${Date.now()}`;
    writeFileSync(join(worktree, 'agent.sh'), `( sh -c 'sleep 1000; echo ${marker}' & ) ; echo started > started.txt\n`);
    const provider = new CommandProvider({ command: ['/bin/sh', join(worktree, 'agent.sh')], promptVia: 'stdin' });
    await provider.run({
      role: 'execute', taskTitle: 't', prompt: 'p', cwd: worktree, model: 'm', allowedTools: [], permissionMode: 'acceptEdits',
      onToken: () => {}, signal: new AbortController().signal, askUser: async () => '',
      sandbox: { spec: { kind: 'bwrap', hide: [], readOnly: [], writable: [] }, worktree },
    });
    expect(existsSync(join(worktree, 'started.txt'))).toBe(true);
    await expect.poll(() => processesWith(marker), { timeout: budget(30_000) }).toEqual([]);
    removeTempDirs();
  });
});

describe("the agent's report", () => {
  /** An execute run whose command agent writes greeting.txt after `makeReport` (shell) made `.maestro/report.md`. */
  async function runWithReport(sb: ReturnType<typeof tempRepo>, makeReport: (l: ReturnType<typeof daemonLayout>) => string) {
    const l = daemonLayout(sb);
    const path = join(l.bin, 'agent.sh');
    writeFileSync(path, `cat >/dev/null
if [ "$MAESTRO_ROLE" = execute ]; then mkdir -p .maestro && ${makeReport(l)} && echo hello > greeting.txt; fi
echo done
`);
    const job = parseJob(sb.job({ kind: 'execute', provider: { kind: 'command', command: ['/bin/sh', path] }, project: { id: 'p1', repoPath: sb.repo, worktreeRoot: l.worktreeRoot } } as never, '', 'e1'));
    expect(await runPipeline(job, { runDir: l.runDir })).toMatchObject({ type: 'result' });
    expect(branchFile(sb, 'greeting.txt')).toBe('hello');
    expect(existsSync(join(l.runDir, 'report.md'))).toBe(false);
    expect(() => branchFile(sb, '.maestro/report.md')).toThrow();
    return l;
  }

  it('is not moved past MAX_REPORT_BYTES: removed unread, not committed, and a failed report phase on the run says why', async () => {
    using sb = tempRepo();
    const l = await runWithReport(sb, () => 'head -c 2097152 /dev/zero > .maestro/report.md');
    const phase = readOutbox(l.runDir).records.find((r) => r.type === 'phase' && r.stage === 'report');
    expect(phase).toMatchObject({ state: 'failed', detail: { code: 'CORRUPT_FILE', message: expect.stringContaining('.maestro/report.md is 2097152 bytes') } });
  });

  it('is not followed when it is a link: the token it points at never reaches the run, and the link is not committed', async () => {
    using sb = tempRepo();
    const l = await runWithReport(sb, (layout) => `ln -s ${layout.home}/token .maestro/report.md`);
    expect(readFileSync(join(l.runDir, 'outbox.ndjson'), 'utf8')).not.toContain(TOKEN);
  });
});

describe.skipIf(unusable)('a daemon with agentSandbox "bwrap"', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 0 });
    d = null;
    removeTempDirs();
  });

  it("runs the project's agent in the sandbox: the daemon's token and environment are out of its reach, its work reaches review", async () => {
    const repo = makeRepo();
    // The agent's script lives in the repository (readable in the sandbox), out of git's sight.
    mkdirSync(join(repo, '.agent'));
    writeFileSync(join(repo, '.git', 'info', 'exclude'), '.agent/\n');
    const home = tempDir('maestro-home-');
    d = await startTestDaemon({ home, agentSandbox: { kind: 'bwrap', required: true, hide: [], writable: [] } });
    expect(d.logs.find((l) => l.includes('daemon started'))).toContain('"agentSandbox":"bwrap"');
    const agent = join(repo, '.agent', 'agent.sh');
    writeFileSync(agent, `cat >/dev/null
case "$MAESTRO_ROLE" in
  execute)
    { cat ${home}/token 2>/dev/null || echo no-token; test -e /proc/${process.pid}/environ && echo daemon-visible || echo no-daemon; } > probe.txt
    echo hello > greeting.txt; echo done ;;
  review*) printf '\`\`\`json\\n{"verdict":"approve","findings":[]}\\n\`\`\`\\n' ;;
  *) echo done ;;
esac
`);
    const project = await d.store.projects.create({ name: 'sandboxed', repoPath: repo, config: { provider: { kind: 'command', command: ['/bin/sh', agent], promptVia: 'stdin' } } });
    const created = await d.fetch('/api/tasks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ projectId: project.id, title: 'Greet', complexity: 'easy' }) });
    expect(created.status).toBe(201);
    const task = ((await created.json()) as { task: { id: string } }).task;
    await until(d.bus, async () => (await d!.store.tasks.get(task.id)).status === 'exec_review', 'the task to reach review', 120_000);
    const branch = `maestro/${task.id}-v1`;
    expect(git(repo, 'show', `${branch}:greeting.txt`).trim()).toBe('hello');
    // The same agent without the sandbox prints the token and finds the daemon's environ (checked by hand).
    expect(git(repo, 'show', `${branch}:probe.txt`).trim().split('\n')).toEqual(['no-token', 'no-daemon']);
  });
  it("hides the other registered projects from a run's agent: their .env is none of its business", async () => {
    // The other project outside /tmp, as a user's are (the sandbox's own /tmp would hide it anyway).
    const other = makeRepo({ 'README.md': '# other\n' }, '/var/tmp');
    writeFileSync(join(other, '.env'), 'API_KEY=other-project-secret\n');
    const repo = makeRepo();
    mkdirSync(join(repo, '.agent'));
    writeFileSync(join(repo, '.git', 'info', 'exclude'), '.agent/\n');
    d = await startTestDaemon({ agentSandbox: { kind: 'bwrap', required: true, hide: [], writable: [] } });
    await d.store.projects.create({ name: 'other', repoPath: other, config: {} });
    const agent = join(repo, '.agent', 'agent.sh');
    writeFileSync(agent, `cat >/dev/null
case "$MAESTRO_ROLE" in
  execute) { cat ${other}/.env 2>/dev/null || echo no-secret; cat README.md; } > probe.txt; echo done ;;
  review*) printf '\`\`\`json\\n{"verdict":"approve","findings":[]}\\n\`\`\`\\n' ;;
  *) echo done ;;
esac
`);
    const project = await d.store.projects.create({ name: 'this', repoPath: repo, config: { provider: { kind: 'command', command: ['/bin/sh', agent], promptVia: 'stdin' } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Look around', complexity: 'easy' });
    await until(d.bus, async () => (await d!.store.tasks.get(task.id)).status === 'exec_review', 'the task to reach review', 120_000);
    // Its own project stays readable; the other one's files are gone (the same agent unsandboxed reads the key).
    expect(git(repo, 'show', `maestro/${task.id}-v1:probe.txt`).trim().split('\n')).toEqual(['no-secret', '# test']);
  });

  it("a task cancelled while its agent works leaves no scratch folder of the agent's behind", async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, '.agent'));
    writeFileSync(join(repo, '.git', 'info', 'exclude'), '.agent/\n');
    d = await startTestDaemon({ agentSandbox: { kind: 'bwrap', required: true, hide: [], writable: [] } });
    const agent = join(repo, '.agent', 'agent.sh');
    writeFileSync(agent, 'cat >/dev/null\nexec sleep 600\n');
    const project = await d.store.projects.create({ name: 'cancelled', repoPath: repo, config: { provider: { kind: 'command', command: ['/bin/sh', agent], promptVia: 'stdin' } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Wait', complexity: 'easy' });
    // The agent's call under way: its scratch folder (what the sandbox shows at the run directory's path) beside
    // the run directory, in the home.
    const scratch = await until(d.bus, async () => {
      const [run] = await d!.store.runs.list({ taskId: task.id, status: 'running' });
      const dir = run?.runDir ? `${run.runDir}.scratch` : null;
      return dir && existsSync(dir) && readdirSync(dir).length === 1 ? dir : null;
    }, "the agent's call to start", 120_000);
    const res = await d.fetch(`/api/tasks/${task.id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
    // The worker is killed mid-call, so it cannot remove the folder itself: the daemon does, once it has exited.
    await until(d.bus, async () => !existsSync(scratch), 'the scratch folder to be removed', 60_000);
  });
});

describe('a daemon configured for a sandbox it cannot start', () => {
  it('refuses to start, saying why and what to do, and creates nothing in its home', async () => {
    const home = tempDir('maestro-home-');
    const path = process.env.PATH;
    process.env.PATH = tempDir('maestro-empty-path-');
    try {
      await expect(startTestDaemon({ home, agentSandbox: { kind: 'bwrap', required: true, hide: [], writable: [] } })).rejects.toThrow(/agentSandbox is "bwrap", but bwrap is not installed .*apt-get install bubblewrap/);
    } finally {
      process.env.PATH = path;
    }
    expect(readdirSync(home)).toEqual([]);
    removeTempDirs();
  });
});
