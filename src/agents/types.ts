/**
 * One interface for every agent Maestro can drive (ARCHITECTURE §3 Agents).
 * Pipelines only ever see this; nothing else may know which provider answers.
 */
import type { RunSandbox } from '../lib/sandbox.js';

/** What the agent is being asked to do; the scripted provider matches on it. */
export type AgentRole = 'plan' | 'execute' | 'review:code' | 'review:security' | 'conflict' | 'reflect' | 'summarize' | 'curate';

export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';

export interface AgentRequest {
  role: AgentRole;
  /** The task title (the scripted provider matches on it too). */
  taskTitle: string;
  prompt: string;
  cwd: string;
  model: string;
  allowedTools: string[];
  permissionMode: PermissionMode;
  /** Called with each piece of text as the agent produces it. */
  onToken: (text: string) => void;
  signal: AbortSignal;
  /** Continue an earlier session of the same provider (claude: the SDK session id). */
  resumeSessionId?: string;
  /** The project's repository: the claude provider serves its knowledge to the agent over MCP (`maestro mcp --root`). */
  projectRoot?: string;
  /**
   * Lets the agent ask a clarifying question mid-run and go on with the reply.
   * Providers that cannot pause (claude, command) end the turn instead with a
   * `CLARIFY:` line; the pipeline asks and resumes the session with the reply.
   */
  askUser: (question: string) => Promise<string>;
  /** Tool calls as the agent starts and ends them (providers that see them: codex, gemini, cursor, opencode). */
  onTool?: (event: AgentToolEvent) => void;
  /** Every process the agent starts runs in this sandbox (src/lib/sandbox.ts); none when absent. */
  sandbox?: RunSandbox;
}

/** One phase of one tool call the agent made (a command, a file edit, a search). */
export interface AgentToolEvent {
  /** The tool's own call id, so a start and its end can be paired. */
  id: string;
  /** The tool's name as the agent CLI reports it (`command`, `Bash`, `edit`, `readToolCall`...). */
  name: string;
  state: 'start' | 'done' | 'failed';
  /** A short human line: the command run, the file touched. */
  summary?: string;
}

/** What a JSONL event stream held besides the answer: lines that were not JSON, event types not understood. */
export interface StreamDiagnostics {
  lines: number;
  /** 1-based line numbers of stdout lines that were not JSON objects (first 20 kept). */
  malformed: Array<{ line: number; text: string }>;
  /** Event types this Maestro does not know, with how often each came (they are ignored). */
  unknownTypes: Record<string, number>;
}

export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface AgentResult {
  /** The agent's final answer (the whole text for providers without a separate result). */
  text: string;
  sessionId: string | null;
  usage: AgentUsage;
  /** Set by the JSONL providers when their stream held something worth a look. */
  diagnostics?: StreamDiagnostics;
}

export type ProviderKind = 'claude' | 'command' | 'scripted' | 'codex' | 'gemini' | 'cursor' | 'opencode';

export interface AgentProvider {
  readonly kind: ProviderKind;
  run(request: AgentRequest): Promise<AgentResult>;
}

export const READ_ONLY_TOOLS = ['Read', 'Grep', 'Glob'];
export const EDIT_TOOLS = ['Read', 'Grep', 'Glob', 'Edit', 'Write', 'Bash'];

/** The marker a non-interactive agent uses to ask a question (one line, anywhere in its answer). */
export const CLARIFY_PATTERN = /^CLARIFY:\s*(.+)$/m;
