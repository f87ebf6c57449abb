/**
 * Any CLI agent, configured as an argv: `{model}` and `{prompt}` are replaced
 * in each argument (no shell is involved), the prompt goes on stdin unless
 * `promptVia: arg`, stdout is streamed as tokens, exit 0 is success. Abort
 * (including the pipeline's timeout) ends the whole process group.
 */
import { spawn } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { childEnv } from '../lib/agentEnv.js';
import { trackResource } from '../lib/resources.js';
import { sandboxed, withTool } from '../lib/sandbox.js';
import { CREDENTIAL_ENV } from './credentials.js';
import { stderrGist } from './stderrGist.js';
import type { AgentProvider, AgentRequest, AgentResult } from './types.js';

export interface CommandOptions {
  command: string[];
  promptVia: 'stdin' | 'arg';
  env?: Record<string, string>;
}

const KILL_GRACE_MS = 2000;

export class CommandProvider implements AgentProvider {
  readonly kind = 'command' as const;
  constructor(private readonly options: CommandOptions) {}

  run(req: AgentRequest): Promise<AgentResult> {
    const [file, ...rest] = this.options.command;
    if (!file) return Promise.reject(new MaestroError('UNKNOWN_PROVIDER', 'the command provider needs a command'));
    const hasPromptArg = rest.some((a) => a.includes('{prompt}'));
    // One pass, each value given by a function: as a replacement string, `$&`, `$'` or `` $` `` in a prompt (a diff of
    // code, shell's $'\n') were read as patterns, and the agent got text that was not in it.
    const args = rest.map((a) => a.replace(/\{(model|prompt)\}/g, (_m, key: string) => (key === 'model' ? req.model : req.prompt)));
    if (this.options.promptVia === 'arg' && !hasPromptArg) args.push(req.prompt);
    if (req.signal.aborted) return Promise.reject(new MaestroError('INTERRUPTED', 'the agent run was aborted'));

    return new Promise((resolve, reject) => {
      // In the sandbox the command, and any script its settings name by absolute path, are readable where they lie.
      const box = this.options.command.filter((a) => isAbsolute(a)).reduce((b, path) => withTool(b, path), req.sandbox);
      const start = sandboxed(box, req.cwd, file, args);
      const child = spawn(start.file, start.args, {
        cwd: req.cwd,
        env: { ...childEnv(CREDENTIAL_ENV.command), ...this.options.env, MAESTRO_MODEL: req.model, MAESTRO_ROLE: req.role },
        stdio: ['pipe', 'pipe', 'pipe'],
        // Its own process group, so an abort also ends whatever the agent started.
        detached: true,
      });
      const killGroup = (signal: NodeJS.Signals) => {
        try {
          if (child.pid) process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      };
      const release = trackResource('process', `command agent ${file} (pid ${child.pid})`, () => killGroup('SIGKILL'));
      let stdout = '';
      let stderr = '';
      let graceTimer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        killGroup('SIGTERM');
        graceTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
      };
      req.signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        req.onToken(chunk);
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-4000);
      });
      child.stdin.on('error', () => {}); // an agent that never reads stdin closes it early
      child.stdin.end(this.options.promptVia === 'stdin' ? req.prompt : '');
      const finish = (err: Error | null, code: number | null, signal: NodeJS.Signals | null) => {
        req.signal.removeEventListener('abort', onAbort);
        if (graceTimer) clearTimeout(graceTimer);
        release();
        if (req.signal.aborted) return reject(new MaestroError('INTERRUPTED', `the agent ${file} was stopped`));
        if (err) return reject(new MaestroError('AGENT_FAILED', `cannot start agent command ${file}: ${err.message}`, { cause: err }));
        if (code !== 0) {
          return reject(new MaestroError('AGENT_FAILED', `agent command ${file} exited with ${code ?? signal}: ${stderrGist(stderr)}`, {
            details: { code, signal, stderr: stderr.slice(-2000) },
          }));
        }
        resolve({ text: stdout, sessionId: null, usage: { inputTokens: Math.ceil(req.prompt.length / 4), outputTokens: Math.ceil(stdout.length / 4), costUsd: 0 } });
      };
      child.once('error', (err) => finish(err, null, null));
      // The agent's own process is done: what it left running in its group (a dev server, a watcher, a `cmd &`)
      // would go on changing the worktree after the commit, or hold its output open and this call with it.
      child.once('exit', () => killGroup('SIGKILL'));
      child.once('close', (code, signal) => finish(null, code, signal));
    });
  }
}
