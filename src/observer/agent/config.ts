/**
 * How a user turns the observer's model on (docs: src/observer/README.md):
 *
 *   MAESTRO_OBSERVER_AGENT             off (default) | claude | scripted:<script> | a provider JSON
 *                                      ({"kind":"command","command":[…]} etc., as in job.json)
 *   MAESTRO_OBSERVER_AGENT_LOG         the scripted provider's call log (optional)
 *   MAESTRO_OBSERVER_MODEL             the model (default: the easy tier, MAESTRO_MODEL_EASY or haiku)
 *   MAESTRO_OBSERVER_AGENT_TIMEOUT_MS  per call (default 120000)
 *
 * `maestro observe --agent … --agent-script …` overrides the variables. With
 * an agent configured, summaries and curation decisions go through it; without
 * one the deterministic paths run. A bad value is refused with the variable
 * that holds it.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { notJsonMessage } from '../../lib/jsonError.js';
import type { AgentProvider } from '../../agents/types.js';
import { resolveTiers } from '../../agents/tiers.js';
import { providerConfigSchema, type ProviderConfig } from '../../executor/protocol/job.js';
import type { SandboxSpec } from '../../lib/sandbox.js';
import type { CurateFn } from '../curation/curator.js';
import type { SummarizeFn } from '../summary/orchestrator.js';
import { createAgentCurator } from './curator-agent.js';
import { createAgentSummarizer } from './summary-agent.js';

export interface ObserverAgentConfig {
  provider: ProviderConfig;
  model: string;
  timeoutMs: number;
  /** The daemon's agent sandbox (src/lib/sandbox.ts): the agent reads a person's sessions, which may carry instructions. */
  sandbox?: SandboxSpec | null;
}

export interface ObserverAgentOverrides {
  /** off | claude | scripted */
  agent?: string;
  agentScript?: string;
}

type Env = Record<string, string | undefined>;

function fromValue(value: string, where: string, cwd: string, env: Env): ProviderConfig | null {
  const v = value.trim();
  if (!v || v === 'off' || v === 'none') return null;
  if (v === 'claude') return { kind: 'claude' };
  let raw: unknown;
  if (v.startsWith('scripted:')) {
    const script = resolve(cwd, v.slice('scripted:'.length).trim());
    raw = { kind: 'scripted', script, ...(env.MAESTRO_OBSERVER_AGENT_LOG ? { callLog: resolve(cwd, env.MAESTRO_OBSERVER_AGENT_LOG) } : {}) };
  } else if (v.startsWith('{')) {
    try {
      raw = JSON.parse(v);
    } catch {
      // The place only: JSON.parse's message quotes the value, and a provider's `env` may hold keys (the error
      // reaches the daemon's log and the board; projectSettings.ts masks them for the same reason).
      throw new MaestroError('CONFIG_INVALID', notJsonMessage(where, v));
    }
  } else {
    throw new MaestroError('CONFIG_INVALID', `${where} must be off, claude, scripted:<script file> or a provider JSON object, got "${v}".`);
  }
  const parsed = providerConfigSchema.safeParse(raw);
  if (!parsed.success) throw new MaestroError('CONFIG_INVALID', `${where}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  if (parsed.data.kind === 'scripted' && !existsSync(parsed.data.script)) {
    throw new MaestroError('CONFIG_INVALID', `${where}: the agent script ${parsed.data.script} does not exist.`);
  }
  return parsed.data;
}

/** The observer's agent, or null when none is configured (the deterministic paths). */
export function resolveObserverAgent(env: Env, cwd: string, overrides: ObserverAgentOverrides = {}): ObserverAgentConfig | null {
  let provider: ProviderConfig | null;
  if (overrides.agent !== undefined) {
    if (overrides.agent === 'scripted') {
      if (!overrides.agentScript) throw new MaestroError('BAD_INPUT', '--agent scripted needs --agent-script <file>.');
      provider = fromValue(`scripted:${overrides.agentScript}`, '--agent-script', cwd, env);
    } else provider = fromValue(overrides.agent, '--agent', cwd, env);
  } else if (overrides.agentScript) {
    provider = fromValue(`scripted:${overrides.agentScript}`, '--agent-script', cwd, env);
  } else provider = fromValue(env.MAESTRO_OBSERVER_AGENT ?? '', 'MAESTRO_OBSERVER_AGENT', cwd, env);
  if (!provider) return null;
  const timeoutRaw = env.MAESTRO_OBSERVER_AGENT_TIMEOUT_MS?.trim();
  const timeoutMs = timeoutRaw ? Number(timeoutRaw) : 120_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new MaestroError('CONFIG_INVALID', `MAESTRO_OBSERVER_AGENT_TIMEOUT_MS must be a positive integer (ms), got "${timeoutRaw}".`);
  }
  const model = env.MAESTRO_OBSERVER_MODEL?.trim() || resolveTiers(env as NodeJS.ProcessEnv).easy;
  return { provider, model, timeoutMs };
}

/**
 * The `summarize` and `curate` seams for a configured agent. The provider is
 * created on first use (the Claude SDK is not loaded by a run that never
 * calls it) and shared by both seams.
 */
export function observerAgentSeams(agent: ObserverAgentConfig, cwd: string): { summarize: SummarizeFn; curate: CurateFn } {
  let provider: Promise<AgentProvider> | null = null;
  const lazy: AgentProvider = {
    kind: agent.provider.kind,
    async run(req) {
      provider ??= import('../../agents/index.js').then((m) => m.createProvider(agent.provider));
      return (await provider).run(agent.sandbox ? { ...req, sandbox: { spec: agent.sandbox, worktree: null } } : req);
    },
  };
  const common = { provider: lazy, model: agent.model, cwd, timeoutMs: agent.timeoutMs };
  return { summarize: createAgentSummarizer(common), curate: createAgentCurator(common) };
}
