/**
 * One AgentProvider for the four JSONL agent CLIs: it builds the tool's argv
 * from tools.ts, runs it through jsonl.ts, lets the tool's parser turn events
 * into tokens, tool phases, usage and the answer, and turns a run that ended
 * without a result into the error failure.ts names. A clarifying question
 * arrives, as with Claude, as a `CLARIFY:` line in the answer; the pipeline
 * asks the human and resumes the tool's session with the reply.
 * `allowedTools` (Claude Code's tool names) has no equivalent in these CLIs:
 * the permission mode is what keeps a review read-only (tools.ts).
 */
import { MaestroError } from '../../core/errors.js';
import { childEnv } from '../../lib/agentEnv.js';
import { CREDENTIAL_ENV } from '../credentials.js';
import type { AgentProvider, AgentRequest, AgentResult, PermissionMode } from '../types.js';
import { failureFor, succeeded } from './failure.js';
import { runJsonl } from './jsonl.js';
import { CLI_TOOLS, type CliToolKind, type CliToolSpec } from './tools.js';
import { findOnPath, locateTool } from './which.js';
import { sandboxed, withStateDirs, withTool, type RunSandbox } from '../../lib/sandbox.js';

export interface ModelPrice {
  /** USD per million input tokens. */
  inputPerMTok: number;
  /** USD per million output tokens. */
  outputPerMTok: number;
}

export interface CliProviderOptions {
  kind: CliToolKind;
  /** The executable; the tool's usual name on PATH when absent. */
  executable?: string;
  /** Replaces the arguments a permission mode adds (docs/agents.md lists the defaults). */
  permissions?: Partial<Record<PermissionMode, string[]>>;
  /** Added before the prompt on every run (`--skip-git-repo-check`, `--agent build` ...). */
  extraArgs?: string[];
  env?: Record<string, string>;
  /** Prices for tools that report tokens but no cost (codex, gemini, cursor). */
  prices?: Record<string, ModelPrice>;
}

/** The model name that means "no model flag: the tool's own default". */
export const TOOL_DEFAULT_MODEL = 'default';

export class CliAgentProvider implements AgentProvider {
  readonly kind: CliToolKind;
  private readonly spec: CliToolSpec;
  constructor(private readonly options: CliProviderOptions) {
    this.kind = options.kind;
    this.spec = CLI_TOOLS[options.kind];
  }

  async run(req: AgentRequest): Promise<AgentResult> {
    if (req.signal.aborted) throw new MaestroError('INTERRUPTED', `${this.spec.name} was stopped before it started`);
    const { spec, options } = this;
    const env = { ...childEnv(CREDENTIAL_ENV[this.kind]), ...spec.runEnv(req.permissionMode), ...options.env, MAESTRO_MODEL: req.model, MAESTRO_ROLE: req.role };
    const file = options.executable ?? locateTool(spec, env).name;
    const { args, stdin } = spec.argv({
      prompt: req.prompt,
      modelArgs: req.model === TOOL_DEFAULT_MODEL ? [] : spec.modelArgs(req.model),
      permissionArgs: options.permissions?.[req.permissionMode] ?? spec.permissionArgs(req.permissionMode),
      ...(req.resumeSessionId ? { resumeSessionId: req.resumeSessionId } : {}),
      extraArgs: options.extraArgs ?? [],
    });
    const exit = await runJsonl({
      ...this.start(req.sandbox, env, file, req.cwd, args),
      cwd: req.cwd,
      env,
      stdin,
      signal: req.signal,
      parser: spec.createParser({ token: req.onToken, tool: (e) => req.onTool?.(e) }),
    });
    if (!succeeded(exit)) throw failureFor({ name: spec.name, file, loginHint: spec.loginHint, ...(spec.loginExitCodes ? { loginExitCodes: spec.loginExitCodes } : {}) }, exit);
    const { text, usage } = exit.outcome;
    const d = exit.diagnostics;
    return {
      text,
      // A resumed run that does not repeat its id still belongs to the session it resumed.
      sessionId: exit.outcome.sessionId ?? req.resumeSessionId ?? null,
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: usage.costUsd ?? this.price(req.model, usage.inputTokens, usage.outputTokens) },
      ...(d.malformed.length || Object.keys(d.unknownTypes).length ? { diagnostics: d } : {}),
    };
  }

  /**
   * The tool's command line. In the sandbox: the tool the daemon found, by its path, with its folder readable
   * and its state folders writable but for what in them runs code (src/lib/sandbox.ts).
   */
  private start(sandbox: RunSandbox | undefined, env: NodeJS.ProcessEnv, file: string, cwd: string, args: string[]): { file: string; args: string[] } {
    if (!sandbox) return { file, args };
    const path = findOnPath(file, env);
    return sandboxed(withTool(withStateDirs(sandbox, this.spec.stateDirs(env), this.spec.lockedState(env), [], env.HOME), path), cwd, path ?? file, args);
  }

  private price(model: string, input: number, output: number): number {
    const p = this.options.prices?.[model];
    return p ? (input * p.inputPerMTok + output * p.outputPerMTok) / 1_000_000 : 0;
  }
}
