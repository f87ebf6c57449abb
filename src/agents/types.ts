/**
 * One interface for every agent Maestro can drive (ARCHITECTURE §3 Agents).
 * Pipelines only ever see this; nothing else may know which provider answers.
 */

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
}

export interface AgentProvider {
  readonly kind: 'claude' | 'command' | 'scripted';
  run(request: AgentRequest): Promise<AgentResult>;
}

export const READ_ONLY_TOOLS = ['Read', 'Grep', 'Glob'];
export const EDIT_TOOLS = ['Read', 'Grep', 'Glob', 'Edit', 'Write', 'Bash'];

/** The marker a non-interactive agent uses to ask a question (one line, anywhere in its answer). */
export const CLARIFY_PATTERN = /^CLARIFY:\s*(.+)$/m;
