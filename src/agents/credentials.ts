/**
 * What each provider needs from the environment. Agents and workers run with
 * a clean environment (an allowlist); each provider's credential variables
 * must be on it or the tool cannot log in. HOME (credential files), PATH
 * (finding the tool) and the locale are the allowlist's own business.
 */
import type { Complexity } from '../core/types.js';
import { CLI_TOOLS, type CliToolKind } from './cli/tools.js';
import { DEFAULT_TIERS } from './tiers.js';
import type { ProviderKind } from './types.js';

export const CREDENTIAL_ENV: Record<ProviderKind, string[]> = {
  claude: [
    'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'ANTHROPIC_CUSTOM_HEADERS',
    'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CONFIG_DIR', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX',
    'AWS_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
    'CLOUD_ML_REGION', 'ANTHROPIC_VERTEX_PROJECT_ID', 'GOOGLE_APPLICATION_CREDENTIALS',
  ],
  codex: CLI_TOOLS.codex.credentialEnv,
  gemini: CLI_TOOLS.gemini.credentialEnv,
  cursor: CLI_TOOLS.cursor.credentialEnv,
  opencode: CLI_TOOLS.opencode.credentialEnv,
  // The command provider's tool gets its own `env` from the project config; the scripted one needs nothing.
  command: [],
  scripted: [],
};

/** Cloud credentials Claude Code uses only behind its switch: a run on Anthropic's API gets no AWS or Google keys. */
const CLAUDE_CLOUDS: Array<{ switch: string; names: string[] }> = [
  { switch: 'CLAUDE_CODE_USE_BEDROCK', names: ['AWS_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] },
  { switch: 'CLAUDE_CODE_USE_VERTEX', names: ['CLOUD_ML_REGION', 'ANTHROPIC_VERTEX_PROJECT_ID', 'GOOGLE_APPLICATION_CREDENTIALS'] },
];

/**
 * The credential variables a run of `provider` is given from `env` (the daemon's): the provider's, less the
 * clouds it is not switched to. The switch may be the daemon's or the project's (its provider `env`), the
 * keys being the daemon's either way.
 */
export function credentialsFor(provider: { kind: ProviderKind; env?: Record<string, string> }, env: NodeJS.ProcessEnv): string[] {
  const switched = (name: string) => Boolean(provider.env?.[name] ?? env[name]);
  const unused = provider.kind === 'claude' ? new Set(CLAUDE_CLOUDS.filter((c) => !switched(c.switch)).flatMap((c) => c.names)) : new Set<string>();
  return CREDENTIAL_ENV[provider.kind].filter((name) => !unused.has(name));
}

/** The model names a provider uses for each tier before the project or env say otherwise. */
export function providerTiers(kind: string): Record<Complexity, string> {
  return kind in CLI_TOOLS ? { ...CLI_TOOLS[kind as CliToolKind].defaultTiers } : { ...DEFAULT_TIERS };
}
