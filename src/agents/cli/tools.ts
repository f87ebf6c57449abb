/**
 * The four agent CLIs Maestro drives through their JSONL mode, one entry
 * each: the executable, the argv for a run (prompt on stdin where the tool
 * reads it there, so a large diff never meets the argv size limit), model
 * tiers, what each Maestro permission mode becomes in the tool's own terms,
 * the credentials it reads, and how `maestro doctor` tells it is logged in.
 *
 * Permission modes (what the pipelines ask for; docs/agents.md has the table):
 * - `plan` (planner, reviewers, reflect): read-only.
 * - `acceptEdits` (executor, conflict): edit files and run commands in the
 *   worktree without asking, like Claude Code with Edit/Write/Bash allowed.
 * - `bypassPermissions`: no sandbox, no questions.
 * - `default`: whatever the tool's own config says.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Complexity } from '../../core/types.js';
import type { PermissionMode } from '../types.js';
import { createCodexParser } from './codexEvents.js';
import { createCursorParser } from './cursorEvents.js';
import { createGeminiParser } from './geminiEvents.js';
import type { EventParser, ParserSink } from './jsonl.js';
import { createOpencodeParser } from './opencodeEvents.js';

export const CLI_TOOL_KINDS = ['codex', 'gemini', 'cursor', 'opencode'] as const;
export type CliToolKind = (typeof CLI_TOOL_KINDS)[number];

export interface Invocation {
  prompt: string;
  /** The model flag's arguments, or [] for the tool's own default model. */
  modelArgs: string[];
  permissionArgs: string[];
  resumeSessionId?: string;
  extraArgs: string[];
}

export interface CliToolSpec {
  kind: CliToolKind;
  /** How messages name it: "Codex CLI". */
  name: string;
  executable: string;
  /** Other names the same tool is installed under, tried in order when `executable` is not on PATH. */
  alternativeExecutables?: string[];
  defaultTiers: Record<Complexity, string>;
  modelArgs(model: string): string[];
  permissionArgs(mode: PermissionMode): string[];
  /** Environment a run needs besides the credentials (trust, permissions the tool reads from env). */
  runEnv(mode: PermissionMode): Record<string, string>;
  argv(inv: Invocation): { args: string[]; stdin: string };
  createParser(sink: ParserSink): EventParser;
  /** Variables holding credentials or pointing at them: a clean agent environment must keep these. */
  credentialEnv: string[];
  /** Files whose presence means "logged in" (a login writes them). */
  credentialFiles(env: NodeJS.ProcessEnv): string[];
  /** Where the tool keeps its sessions and settings: writable in the agent sandbox, or a resume finds nothing. */
  stateDirs(env: NodeJS.ProcessEnv): string[];
  /**
   * What in those folders starts programs or instructs every session (MCP servers, hooks, plugins, the user's
   * instructions): read-only in the sandbox (withStateDirs), since the user's own sessions of the tool read it.
   */
  lockedState(env: NodeJS.ProcessEnv): string[];
  /** A status command that exits 0 when logged in (tried when no variable or file says so). */
  statusArgs?: string[];
  loginHint: string;
  loginExitCodes?: number[];
}

const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir();
const in_ = (folder: string, names: string[]) => names.map((n) => join(folder, n));
/** Each tool's own folder (its login, sessions and settings), as the tool finds it. */
const codexHome = (env: NodeJS.ProcessEnv) => env.CODEX_HOME || join(home(env), '.codex');
const geminiDir = (env: NodeJS.ProcessEnv) => join(home(env), '.gemini');
const cursorDir = (env: NodeJS.ProcessEnv) => join(home(env), '.cursor');
const opencodeConfig = (env: NodeJS.ProcessEnv) => join(env.XDG_CONFIG_HOME || join(home(env), '.config'), 'opencode');

const codex: CliToolSpec = {
  kind: 'codex',
  name: 'Codex CLI',
  executable: 'codex',
  defaultTiers: { hard: 'gpt-5.3-codex', medium: 'gpt-5.2-codex', easy: 'gpt-5.1-codex-mini' },
  modelArgs: (model) => ['--model', model],
  // `codex exec` never asks for approval; the sandbox is what limits it.
  permissionArgs: (mode) => ({
    plan: ['--sandbox', 'read-only'],
    acceptEdits: ['--sandbox', 'workspace-write'],
    bypassPermissions: ['--dangerously-bypass-approvals-and-sandbox'],
    default: [],
  })[mode],
  runEnv: () => ({}),
  // Options belong to `exec` and come before `resume`; `-` reads the prompt from stdin.
  argv: (inv) => ({
    args: ['exec', '--json', ...inv.modelArgs, ...inv.permissionArgs, ...inv.extraArgs, ...(inv.resumeSessionId ? ['resume', inv.resumeSessionId] : []), '-'],
    stdin: inv.prompt,
  }),
  createParser: createCodexParser,
  credentialEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'CODEX_HOME', 'OPENAI_BASE_URL'],
  credentialFiles: (env) => [join(codexHome(env), 'auth.json')],
  stateDirs: (env) => [codexHome(env)],
  lockedState: (env) => in_(codexHome(env), ['config.toml', 'AGENTS.md', 'AGENTS.override.md', 'prompts']),
  statusArgs: ['login', 'status'],
  loginHint: 'run `codex login` (or set OPENAI_API_KEY)',
};

const gemini: CliToolSpec = {
  kind: 'gemini',
  name: 'Gemini CLI',
  executable: 'gemini',
  // Gemini CLI's own aliases, which it maps to its current models.
  defaultTiers: { hard: 'pro', medium: 'flash', easy: 'flash-lite' },
  modelArgs: (model) => ['--model', model],
  // Headless Gemini leaves out every tool that would ask, so `default` is read-only there;
  // `auto_edit` would leave out the shell, which an executor needs for the project's commands.
  permissionArgs: (mode) => ({
    plan: ['--approval-mode', 'default'],
    acceptEdits: ['--approval-mode', 'yolo'],
    bypassPermissions: ['--approval-mode', 'yolo'],
    default: [],
  })[mode],
  // Worktrees are folders Gemini has never seen; headless runs refuse an untrusted folder.
  runEnv: () => ({ GEMINI_CLI_TRUST_WORKSPACE: 'true' }),
  // Piped stdin is put before the --prompt text, so the prompt goes there whole.
  argv: (inv) => ({
    args: ['--output-format', 'stream-json', ...inv.modelArgs, ...inv.permissionArgs, ...(inv.resumeSessionId ? ['--resume', inv.resumeSessionId] : []), ...inv.extraArgs, '--prompt', 'Do what the text above asks.'],
    stdin: inv.prompt,
  }),
  createParser: createGeminiParser,
  // The base URLs point the tool at a gateway or proxy, as OPENAI_BASE_URL and ANTHROPIC_BASE_URL do for the others.
  credentialEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_GENAI_USE_GCA', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_GEMINI_BASE_URL', 'GOOGLE_VERTEX_BASE_URL'],
  credentialFiles: (env) => [join(geminiDir(env), 'oauth_creds.json')],
  stateDirs: (env) => [geminiDir(env)],
  lockedState: (env) => in_(geminiDir(env), ['settings.json', 'GEMINI.md', 'extensions', 'commands']),
  loginHint: 'run `gemini` once and choose "Login with Google", or set GEMINI_API_KEY',
  // FatalAuthenticationError in packages/core/src/utils/errors.ts.
  loginExitCodes: [41],
};

const cursor: CliToolSpec = {
  kind: 'cursor',
  name: 'Cursor Agent',
  executable: 'cursor-agent',
  // Newer installs name the binary `agent` (and keep `cursor-agent` as a link).
  alternativeExecutables: ['agent'],
  defaultTiers: { hard: 'sonnet-4.5-thinking', medium: 'sonnet-4.5', easy: 'auto' },
  modelArgs: (model) => ['--model', model],
  // `--mode ask` is Cursor's read-only mode; without --force a headless Cursor only proposes
  // edits and commands, with it it runs them (except what its config denies).
  permissionArgs: (mode) => ({ plan: ['--mode', 'ask'], acceptEdits: ['--force'], bypassPermissions: ['--force'], default: [] })[mode],
  runEnv: () => ({}),
  // Cursor takes the prompt as its last argument (argv, never a shell), after `--`: a resumed call's prompt is a
  // person's answer as given, and one starting with a dash (a list item, `--force`) was read as an option.
  // --trust because a headless run cannot answer the "trust this folder?" prompt a new worktree raises.
  argv: (inv) => ({
    args: ['--print', '--output-format', 'stream-json', '--trust', ...inv.modelArgs, ...inv.permissionArgs, ...(inv.resumeSessionId ? ['--resume', inv.resumeSessionId] : []), ...inv.extraArgs, '--', inv.prompt],
    stdin: '',
  }),
  createParser: createCursorParser,
  credentialEnv: ['CURSOR_API_KEY'],
  credentialFiles: () => [],
  stateDirs: (env) => [cursorDir(env)],
  lockedState: (env) => in_(cursorDir(env), ['mcp.json', 'rules']),
  statusArgs: ['status'],
  loginHint: 'run `cursor-agent login` (or set CURSOR_API_KEY)',
};

// A permission left at "ask" is rejected by a headless run, and the rejection ends the whole run without
// an answer; "deny" gives the model the refusal and the run goes on. `external_directory` (a path outside
// the worktree in a command or a file tool) asks by default: denied, edits stay in the worktree.
const OPENCODE_READ_ONLY = JSON.stringify({ edit: 'deny', bash: 'deny', webfetch: 'deny', external_directory: 'deny' });
const OPENCODE_EDIT = JSON.stringify({ edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'deny' });
const OPENCODE_BYPASS = JSON.stringify({ edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' });

const opencode: CliToolSpec = {
  kind: 'opencode',
  name: 'OpenCode',
  executable: 'opencode',
  defaultTiers: { hard: 'anthropic/claude-opus-4-5', medium: 'anthropic/claude-sonnet-4-5', easy: 'anthropic/claude-haiku-4-5' },
  modelArgs: (model) => ['--model', model],
  permissionArgs: () => [],
  // OPENCODE_PERMISSION (documented) overrides the config's permission block; `opencode run`
  // rejects whatever would still ask.
  runEnv: (mode): Record<string, string> => ({
    plan: { OPENCODE_PERMISSION: OPENCODE_READ_ONLY },
    acceptEdits: { OPENCODE_PERMISSION: OPENCODE_EDIT },
    bypassPermissions: { OPENCODE_PERMISSION: OPENCODE_BYPASS },
    default: {},
  })[mode],
  // A piped stdin is the message when none is given on the command line.
  argv: (inv) => ({
    args: ['run', '--format', 'json', ...inv.modelArgs, ...inv.permissionArgs, ...(inv.resumeSessionId ? ['--session', inv.resumeSessionId] : []), ...inv.extraArgs],
    stdin: inv.prompt,
  }),
  createParser: createOpencodeParser,
  credentialEnv: [
    'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY', 'OPENROUTER_API_KEY', 'GROQ_API_KEY',
    'XAI_API_KEY', 'DEEPSEEK_API_KEY', 'MISTRAL_API_KEY', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION',
    'AWS_PROFILE', 'OPENCODE_CONFIG', 'OPENCODE_CONFIG_DIR', 'XDG_DATA_HOME', 'XDG_CONFIG_HOME',
  ],
  credentialFiles: (env) => [join(env.XDG_DATA_HOME || join(home(env), '.local', 'share'), 'opencode', 'auth.json')],
  stateDirs: (env) => [
    join(env.XDG_DATA_HOME || join(home(env), '.local', 'share'), 'opencode'),
    join(env.XDG_STATE_HOME || join(home(env), '.local', 'state'), 'opencode'),
    opencodeConfig(env),
    join(env.XDG_CACHE_HOME || join(home(env), '.cache'), 'opencode'),
  ],
  lockedState: (env) => in_(opencodeConfig(env), ['opencode.json', 'opencode.jsonc', 'config.json', 'AGENTS.md', 'plugin', 'plugins', 'agent', 'command', 'mode', 'tool']),
  loginHint: 'run `opencode auth login`',
};

export const CLI_TOOLS: Record<CliToolKind, CliToolSpec> = { codex, gemini, cursor, opencode };
