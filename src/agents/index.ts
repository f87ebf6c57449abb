import { MaestroError } from '../core/errors.js';
import { ClaudeProvider } from './claude.js';
import { CliAgentProvider, type ModelPrice } from './cli/provider.js';
import { CLI_TOOL_KINDS, type CliToolKind } from './cli/tools.js';
import { CommandProvider } from './command.js';
import { ScriptedProvider } from './scripted.js';
import type { AgentProvider } from './types.js';

export * from './types.js';
export * from './tiers.js';
export { ScriptedProvider, readCallLog, type ScriptedCall } from './scripted.js';
export { ClaudeProvider } from './claude.js';
export { CommandProvider } from './command.js';
export { parseScript, loadScript } from './scriptFile.js';
export { CliAgentProvider, TOOL_DEFAULT_MODEL } from './cli/provider.js';
export { CLI_TOOLS, CLI_TOOL_KINDS, type CliToolKind } from './cli/tools.js';
export { CREDENTIAL_ENV, providerTiers } from './credentials.js';

export type ProviderSpec =
  | { kind: 'scripted'; script: string; callLog?: string }
  | { kind: 'command'; command: string[]; promptVia: 'stdin' | 'arg'; env?: Record<string, string> }
  | { kind: 'claude'; executable?: string; env?: Record<string, string> }
  | {
    kind: CliToolKind;
    executable?: string;
    models?: Partial<Record<'hard' | 'medium' | 'easy', string>>;
    permissions?: Partial<Record<'default' | 'acceptEdits' | 'plan' | 'bypassPermissions', string[]>>;
    extraArgs?: string[];
    env?: Record<string, string>;
    prices?: Record<string, ModelPrice>;
  };

/** The one place a provider is chosen; an unknown kind is refused by name. */
export function createProvider(spec: ProviderSpec | { kind: string }): AgentProvider {
  const s = spec as ProviderSpec;
  switch (s.kind) {
    case 'scripted':
      return new ScriptedProvider({ script: s.script, ...(s.callLog ? { callLog: s.callLog } : {}) });
    case 'command':
      return new CommandProvider(s);
    case 'claude':
      return new ClaudeProvider(s);
    case 'codex':
    case 'gemini':
    case 'cursor':
    case 'opencode':
      return new CliAgentProvider(s);
    default: {
      const never: never = s;
      throw new MaestroError('UNKNOWN_PROVIDER', `unknown agent provider "${(never as { kind: string }).kind}"; use claude, ${CLI_TOOL_KINDS.join(', ')}, command or scripted`, {
        details: { kind: (never as { kind: string }).kind },
      });
    }
  }
}
