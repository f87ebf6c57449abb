/**
 * The Claude Agent SDK provider: `query()` from @anthropic-ai/claude-agent-sdk,
 * which runs Claude Code as a child process speaking stream-json. Partial
 * messages are streamed to the token callback; usage and cost come from the
 * result message; `resume` continues a session by id; the abort signal aborts
 * the SDK's controller, which ends the child process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { SDKMessage, SpawnOptions } from '@anthropic-ai/claude-agent-sdk';
import { claudeConfigDir } from '../config/env.js';
import { MaestroError } from '../core/errors.js';
import { childEnv } from '../lib/agentEnv.js';
import { sandboxed, withStateDirs, withTool, type RunSandbox } from '../lib/sandbox.js';
import { CREDENTIAL_ENV } from './credentials.js';
import { knowledgeMcp } from './knowledgeMcp.js';
import type { AgentProvider, AgentRequest, AgentResult } from './types.js';

export interface ClaudeOptions {
  /** Claude Code executable; the SDK's bundled native binary when absent. */
  executable?: string;
  env?: Record<string, string>;
}

export class ClaudeProvider implements AgentProvider {
  readonly kind = 'claude' as const;
  constructor(private readonly options: ClaudeOptions = {}) {}

  async run(req: AgentRequest): Promise<AgentResult> {
    const abortController = new AbortController();
    const onAbort = () => abortController.abort();
    if (req.signal.aborted) throw new MaestroError('INTERRUPTED', 'the agent run was aborted');
    req.signal.addEventListener('abort', onAbort, { once: true });
    let sessionId: string | null = req.resumeSessionId ?? null;
    let streamed = false;
    const assistantText: string[] = [];
    try {
      // The project's knowledge as MCP tools (search_knowledge, load_knowledge, stage_knowledge), allowed in every mode.
      const mcp = req.projectRoot ? knowledgeMcp(req.projectRoot, childEnv(CREDENTIAL_ENV.claude)) : null;
      // Loaded on the first claude run: a worker of the scripted or command provider never pays for the SDK.
      const { query } = await import('@anthropic-ai/claude-agent-sdk');
      const messages = query({
        prompt: req.prompt,
        options: {
          cwd: req.cwd,
          model: req.model,
          allowedTools: mcp ? [...req.allowedTools, ...mcp.allowedTools] : req.allowedTools,
          // Over stdin, off the command line other users can read, where Claude Code is the bundled one that reads it there.
          ...(mcp ? { mcpServers: mcp.servers, mcpServersDelivery: this.options.executable ? 'argv' : 'initialize' } : {}),
          permissionMode: req.permissionMode,
          ...(req.permissionMode === 'bypassPermissions' ? { allowDangerouslySkipPermissions: true } : {}),
          abortController,
          includePartialMessages: true,
          ...(req.resumeSessionId ? { resume: req.resumeSessionId } : {}),
          ...(this.options.executable ? { pathToClaudeCodeExecutable: this.options.executable } : {}),
          // Always given: without `env` the SDK hands Claude Code this process's whole environment.
          env: { ...childEnv(CREDENTIAL_ENV.claude), ...this.options.env },
          // In the run's sandbox, Claude Code and everything it starts (its tools, the knowledge MCP server).
          ...(req.sandbox ? { spawnClaudeCodeProcess: (o: SpawnOptions) => spawnSandboxed(withTool(req.sandbox, this.options.executable ?? null)!, o) } : {}),
        },
      });
      for await (const message of messages as AsyncIterable<SDKMessage>) {
        if ('session_id' in message && typeof message.session_id === 'string' && message.session_id) sessionId = message.session_id;
        if (message.type === 'stream_event') {
          const event = message.event as { type: string; delta?: { type: string; text?: string } };
          if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && event.delta.text) {
            streamed = true;
            req.onToken(event.delta.text);
          }
        } else if (message.type === 'assistant') {
          const blocks = (message.message as { content?: Array<{ type: string; text?: string }> }).content ?? [];
          const text = blocks.filter((b) => b.type === 'text' && b.text).map((b) => b.text!).join('');
          if (text) {
            assistantText.push(text);
            // Without partial messages (older Claude Code), whole messages are the tokens.
            if (!streamed) req.onToken(text);
          }
        } else if (message.type === 'result') {
          const usage = {
            inputTokens: message.usage?.input_tokens ?? 0,
            outputTokens: message.usage?.output_tokens ?? 0,
            costUsd: message.total_cost_usd ?? 0,
          };
          if (message.subtype !== 'success' || message.is_error) {
            throw new MaestroError('AGENT_FAILED', `Claude Code ended with ${resultProblem(message)}`, { details: { usage } });
          }
          return { text: message.result || assistantText.join('\n'), sessionId, usage };
        }
      }
      throw new MaestroError('AGENT_FAILED', 'Claude Code ended without a result message');
    } catch (err) {
      if (req.signal.aborted) throw new MaestroError('INTERRUPTED', 'the agent run was aborted', { cause: err });
      if (err instanceof MaestroError) throw err;
      throw new MaestroError('AGENT_FAILED', `Claude Code failed: ${(err as Error).message}`, { cause: err });
    } finally {
      req.signal.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * What went wrong, as the result message says it. A request the API (or a proxy before it) refused ends "success"
 * with `is_error` set, the reason only in its `result` text ("API Error: 403 …"): without it the run said just
 * "ended with success".
 */
function resultProblem(message: Extract<SDKMessage, { type: 'result' }>): string {
  if ('errors' in message && Array.isArray(message.errors) && message.errors.length) return `${message.subtype}: ${message.errors.join('; ')}`;
  if (message.subtype === 'success' && message.result) return `an error: ${message.result}`;
  return message.subtype;
}

/** In Claude Code's config folder: its settings (hooks, permissions, MCP servers) and the user's instructions, commands, agents, skills and output styles (a system prompt). */
const CLAUDE_CODE_LOCKED = ['settings.json', 'settings.local.json', 'CLAUDE.md', 'hooks', 'commands', 'agents', 'skills', 'output-styles'];

/**
 * Locked too, but only where they exist, never made: its plugins (filled on its first run) and its state file when
 * the folder is CLAUDE_CONFIG_DIR (MCP servers again; without it the file is ~/.claude.json, outside the writable
 * folder), which it writes as it goes.
 */
const CLAUDE_CODE_OWN = ['plugins', '.claude.json'];

/**
 * Claude Code started as the SDK would start it, inside bwrap; the SDK's signal ends it after its grace
 * window. Its stderr goes to the worker's, which the daemon keeps the end of (the SDK reads only stdout).
 * Its config folder is writable: it keeps the sessions there that a resume continues. What there runs code or
 * instructs every session (CLAUDE_CODE_LOCKED, CLAUDE_CODE_OWN) is not. A Claude Code of the config's choosing (`executable`) is
 * readable where it lies.
 */
function spawnSandboxed(sandbox: RunSandbox, o: SpawnOptions) {
  const cwd = o.cwd ?? process.cwd();
  const dir = claudeConfigDir(o.env);
  const inDir = (names: string[]) => names.map((name) => join(dir, name));
  const start = sandboxed(withStateDirs(sandbox, [dir], inDir(CLAUDE_CODE_LOCKED), inDir(CLAUDE_CODE_OWN), o.env.HOME), cwd, o.command, o.args);
  return spawn(start.file, start.args, { cwd, env: o.env, signal: o.signal, stdio: ['pipe', 'pipe', 'inherit'] });
}
