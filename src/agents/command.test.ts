import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandProvider } from './command.js';
import type { AgentRequest } from './types.js';
import { poll } from '../../test/helpers/wait.js';
import { bwrapUnusable } from '../../test/helpers/bwrap.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-cmd-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: 'execute', taskTitle: 't', prompt: 'say hi; rm -rf / # not a shell', cwd: dir, model: 'm-1', allowedTools: [], permissionMode: 'default',
    onToken: () => {}, signal: new AbortController().signal, askUser: async () => '', ...overrides,
  };
}

const node = process.execPath;

describe('command provider', () => {
  it('sends the prompt on stdin and streams stdout as tokens', async () => {
    const provider = new CommandProvider({ command: [node, '-e', 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{process.stdout.write("got: "+s+" model="+process.env.MAESTRO_MODEL)})'], promptVia: 'stdin' });
    const tokens: string[] = [];
    const result = await provider.run(request({ onToken: (t) => tokens.push(t) }));
    expect(result.text).toBe('got: say hi; rm -rf / # not a shell model=m-1');
    expect(tokens.join('')).toBe(result.text);
  });

  it('passes the prompt as one argument, never through a shell', async () => {
    const provider = new CommandProvider({ command: [node, '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', '--', '--model', '{model}', '{prompt}'], promptVia: 'arg' });
    const result = await provider.run(request());
    expect(JSON.parse(result.text)).toEqual(['--model', 'm-1', 'say hi; rm -rf / # not a shell']);
  });

  it("passes a prompt and a model holding `$&`, `$'`, `` $` `` or `$$` as they are (a diff of code, shell's $'\\n'), not as replacement patterns", async () => {
    // Replaced as String.replaceAll replacement patterns, `$&` became "{prompt}" and `$'` the rest of the argument:
    // the agent (a reviewer reading a diff) got text that was not in the change.
    const prompt = "s.replace(/x/g, '$&!'); echo $'a\\tb'; cost: $$5, `$`` and $1";
    const provider = new CommandProvider({ command: [node, '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', '--', '--model={model}.', '{prompt}', '--prompt={prompt}'], promptVia: 'arg' });
    const result = await provider.run(request({ prompt, model: "m-$'x$&" }));
    expect(JSON.parse(result.text)).toEqual(["--model=m-$'x$&.", prompt, `--prompt=${prompt}`]);
  });

  it.skipIf(bwrapUnusable())('in the agent sandbox runs a script its settings name in /tmp, which the sandbox otherwise replaces', async () => {
    const scripts = mkdtempSync(join(tmpdir(), 'maestro-cmd-agent-'));
    try {
      writeFileSync(join(scripts, 'agent.sh'), 'cat >/dev/null; echo "agent ran, pid $$"\n');
      const provider = new CommandProvider({ command: ['/bin/sh', join(scripts, 'agent.sh')], promptVia: 'stdin' });
      const result = await provider.run(request({ sandbox: { spec: { kind: 'bwrap', hide: [], readOnly: [], writable: [] }, worktree: dir } }));
      expect(Number(/^agent ran, pid (\d+)$/.exec(result.text.trim())![1])).toBeLessThan(10);
    } finally {
      rmSync(scripts, { recursive: true, force: true });
    }
  });

  it('turns a non-zero exit into AGENT_FAILED with the end of stderr', async () => {
    const provider = new CommandProvider({ command: [node, '-e', 'console.error("out of credits"); process.exit(4)'], promptVia: 'stdin' });
    await expect(provider.run(request())).rejects.toMatchObject({ code: 'AGENT_FAILED', message: expect.stringMatching(/exited with 4: out of credits/) });
  });

  it('a script that crashes is reported by its error, not by the Node version it ends with', async () => {
    // A real fs error, thrown uncaught: Node prints the source line, the error, its stack and properties, then its version.
    const provider = new CommandProvider({ command: [node, '-e', 'require("node:fs").renameSync("missing", "moved")'], promptVia: 'stdin' });
    const err = (await provider.run(request()).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ code: 'AGENT_FAILED' });
    expect(err.message).toBe(`agent command ${node} exited with 1: Error: ENOENT: no such file or directory, rename 'missing' -> 'moved' … dest: 'moved' | } | Node.js ${process.version}`);
  });

  it('names the error that ended the agent, not one its log said before; bounded, control characters escaped', async () => {
    const agent = `console.error("\\u001b[33merror\\u001b[0m: rate limited, retrying in 1s");
      console.error("still working " + "x".repeat(1000));
      throw new TypeError("agent.run \\u001b]0;pwned\\u0007is not a function " + "y".repeat(1000));`;
    const provider = new CommandProvider({ command: [node, '-e', agent], promptVia: 'stdin' });
    const err = (await provider.run(request()).catch((e: unknown) => e)) as Error;
    const said = err.message.slice(`agent command ${node} exited with 1: `.length);
    expect(said).toMatch(/^TypeError: agent\.run \\u\{1b\}\]0;pwned\\u\{7\}is not a function y+… … .* \| Node\.js v[\d.]+$/);
    expect(said).not.toContain('rate limited');
    expect(said.length).toBeLessThan(1000);
    expect(err.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
  });

  it("a tool's coloured `error:` line is found and shown without its colour codes", async () => {
    const agent = 'console.error("\\u001b[1;31merror\\u001b[0m: cannot read agent.toml: no such file"); for (const n of [1, 2, 3, 4]) console.error("  note " + n); process.exit(2)';
    const provider = new CommandProvider({ command: [node, '-e', agent], promptVia: 'stdin' });
    await expect(provider.run(request())).rejects.toMatchObject({ message: `agent command ${node} exited with 2: error: cannot read agent.toml: no such file … note 2 | note 3 | note 4` });
  });

  it('reports a command that does not exist', async () => {
    const provider = new CommandProvider({ command: [join(dir, 'no-such-agent')], promptVia: 'stdin' });
    await expect(provider.run(request())).rejects.toMatchObject({ code: 'AGENT_FAILED', message: expect.stringContaining('cannot start agent command') });
  });

  it('ends what the agent left running once it exits: nothing of it goes on in the worktree, and its output does not hold the call', async () => {
    // One process keeps the agent's stdout open (the call waited for it to end), one lives on apart (it could
    // go on changing the worktree after the commit); the agent itself exits at once.
    const agent = `const { spawn } = require('node:child_process');
      const held = spawn('sleep', ['600'], { stdio: ['ignore', 'inherit', 'ignore'] });
      const apart = spawn('sleep', ['600'], { stdio: 'ignore' });
      held.unref(); apart.unref();
      require('node:fs').writeFileSync('pids', held.pid + ' ' + apart.pid);
      process.stdout.write('done');`;
    const provider = new CommandProvider({ command: [node, '-e', agent], promptVia: 'stdin' });
    expect((await provider.run(request())).text).toBe('done');
    const pids = readFileSync(join(dir, 'pids'), 'utf8').split(' ').map(Number);
    // Gone, or a zombie waiting for init to reap it: either way it runs no more.
    const ended = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
      } catch {
        return true;
      }
    };
    await poll(async () => pids.every(ended) || null, 'the processes the agent left are ended', 30_000);
  });

  it('abort (the pipeline timeout) ends the process', async () => {
    const provider = new CommandProvider({ command: [node, '-e', 'process.stdout.write("started");setInterval(()=>{},1000)'], promptVia: 'stdin' });
    const controller = new AbortController();
    const running = provider.run(request({ signal: controller.signal, onToken: () => controller.abort() }));
    await expect(running).rejects.toMatchObject({ code: 'INTERRUPTED' });
  });
});
