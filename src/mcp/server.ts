/**
 * The MCP server (`maestro mcp`, stdio): Maestro's tools for agents. The
 * first four call the daemon's API through the ApiClient, so they obey the
 * same validation and state machine as the board and the CLI; an API error
 * comes back as a tool error carrying the API's code and message.
 * suggest_task_metadata works without a daemon when given a repository path;
 * the knowledge tools (knowledgeTools.ts) work in process on the project root.
 */
import { resolve } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { strictInput } from './strictInput.js';
import type { AgentProvider } from '../agents/types.js';
import { MaestroError, coerceError } from '../core/errors.js';
import { TASK_STATUSES } from '../core/status.js';
import { COMPLEXITIES, GATES, TASK_SCOPES, TASK_TYPES } from '../core/types.js';
import { findProject, type ApiClient } from '../api/client.js';
import { registerKnowledgeTools } from './knowledgeTools.js';
import { suggestTaskMetadata } from './suggest.js';
import type { ProjectList, TaskDetail, TaskList, TaskResponse } from '../api/wire/responses.js';
import { holds } from '../lib/paths.js';

export interface McpDeps {
  client: ApiClient;
  /** The agent behind suggest_task_metadata; null: the heuristic only. */
  provider: AgentProvider | null;
  /** Where suggest_task_metadata looks when given neither a project nor a path. */
  cwd: string;
  /** The project whose knowledge search_knowledge, load_knowledge and stage_knowledge use; absent: no knowledge tools. */
  knowledgeRoot?: string;
  /** The environment of the process serving (the CLI's entry reads it): the knowledge tools' home, run folder, embeddings. */
  env: NodeJS.ProcessEnv;
}

type ToolResult = { content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

async function answer(fn: () => Promise<Record<string, unknown>>): Promise<ToolResult> {
  try {
    const value = await fn();
    return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
  } catch (raw) {
    const err = coerceError(raw);
    const code = err instanceof MaestroError ? err.code : 'INTERNAL';
    return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message: err.message } }) }] };
  }
}

/**
 * The server an agent's run gets (`maestro mcp --knowledge-only`): the project's knowledge tools and nothing
 * else. No API client is made, so the daemon's token is never read: an agent must not be able to create,
 * list or approve tasks through the daemon (an approval merges into main).
 */
export function createKnowledgeMcpServer(deps: { knowledgeRoot: string; env: NodeJS.ProcessEnv }): McpServer {
  const server = new McpServer({ name: 'maestro', version: '0.1.0' });
  registerKnowledgeTools(server, { root: deps.knowledgeRoot, env: deps.env }, answer);
  return server;
}

export function createMcpServer(deps: McpDeps): McpServer {
  const { client } = deps;
  const server = new McpServer({ name: 'maestro', version: '0.1.0' });
  registerCreateTask(server, client);
  registerListTasks(server, client);
  registerGetTask(server, client);
  registerApprove(server, client);
  registerSuggestMetadata(server, deps);
  if (deps.knowledgeRoot) registerKnowledgeTools(server, { root: deps.knowledgeRoot, env: deps.env }, answer);

  return server;
}

/**
 * A repository path the caller (an agent) gave, checked: inside the folder this server was started in, or inside a
 * registered project (the daemon says which). Git and the suggesting agent run there, and a repository's own
 * settings start programs (git's core.fsmonitor, an agent's project hooks): any folder on the machine was a
 * command the caller could have run.
 */
async function allowedRepoPath(deps: McpDeps, repoPath: string): Promise<string> {
  const path = resolve(deps.cwd, repoPath);
  if (holds(deps.cwd, path)) return path;
  const listed = await deps.client.get<ProjectList>('/api/projects').catch(() => null);
  if (listed?.projects.some((p) => holds(p.repoPath, path))) return path;
  const which = listed ? '' : ' (the daemon did not answer to say which there are)';
  throw new MaestroError('BAD_INPUT', `repoPath: ${path} is neither inside ${deps.cwd}, where this server was started, nor inside a registered project${which}; name the project, or start \`maestro mcp\` in that folder.`, { details: { field: 'repoPath' } });
}

/** create_task: a task in a project (by id or name). */
function registerCreateTask(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'create_task',
    {
      title: 'Create a task',
      description: 'Create a task in a Maestro project. The daemon schedules it; dependencies must be task ids of the same project.',
      inputSchema: strictInput({
        project: z.string().min(1).describe('project id or name'),
        title: z.string().min(1).max(500),
        priority: z.union([z.literal(0), z.literal(1), z.literal(2)]).optional().describe('0 is the most urgent; default 1'),
        complexity: z.enum(COMPLEXITIES).optional(),
        deps: z.array(z.string()).optional(),
        parentId: z.string().optional(),
        taskType: z.enum(TASK_TYPES).optional(),
        scope: z.enum(TASK_SCOPES).optional(),
        ownedFiles: z.array(z.string()).optional(),
        expectedOutput: z.string().optional(),
      }),
    },
    async ({ project, ...fields }) =>
      answer(async () => {
        const { project: p } = await findProject(client, project);
        return client.post<TaskResponse>('/api/tasks', { projectId: p.id, ...fields });
      }),
  );
}

/** list_tasks: tasks, optionally of one project and in some statuses. */
function registerListTasks(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'list_tasks',
    {
      title: 'List tasks',
      description: 'List tasks, optionally of one project and in some statuses.',
      inputSchema: strictInput({
        project: z.string().optional().describe('project id or name'),
        status: z.array(z.enum(TASK_STATUSES)).optional(),
        limit: z.number().int().min(1).max(5000).optional(),
      }),
    },
    async ({ project, status, limit }) =>
      answer(async () => {
        const projectId = project ? (await findProject(client, project)).project.id : undefined;
        return client.get<TaskList>('/api/tasks', { projectId, status: status?.join(','), limit });
      }),
  );
}

/** get_task: one task with its approvals, runs and subtasks. */
function registerGetTask(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'get_task',
    { title: 'Show a task', description: 'A task with its approvals, runs, subtasks and last scheduler decision.', inputSchema: strictInput({ id: z.string().min(1) }) },
    async ({ id }) => answer(() => client.get<TaskDetail>(`/api/tasks/${encodeURIComponent(id)}`)),
  );
}

/** approve: passes the gate a task waits at; at exec_review, optionally only if the commit looked at is still the one waiting. */
function registerApprove(server: McpServer, client: ApiClient): void {
  server.registerTool(
    'approve',
    {
      title: 'Approve a gate',
      description: 'Approve the gate (plan_review, spec_review, exec_review) the task waits at.',
      inputSchema: strictInput({
        id: z.string().min(1),
        gate: z.enum(GATES),
        reason: z.string().optional(),
        who: z.string().optional().describe('who approves; default "mcp"'),
        commit: z.string().optional().describe("exec_review only: the full sha of the change looked at (GET /api/tasks/:id/diff's head); refused (STALE_REVIEW) when another commit waits at the gate now"),
      }),
    },
    async ({ id, gate, reason, who, commit }) =>
      answer(() => client.post<TaskResponse>(`/api/tasks/${encodeURIComponent(id)}/approve`, { gate, who: who ?? 'mcp', ...(reason ? { reason } : {}), ...(commit !== undefined ? { commit } : {}) })),
  );
}

/** suggest_task_metadata: works without a daemon when given a repository path. */
function registerSuggestMetadata(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'suggest_task_metadata',
    {
      title: 'Suggest task metadata',
      description: 'Infer taskType, scope, ownedFiles and expectedOutput for a task title from the repository (a project; a path inside a registered project or inside the folder this server was started in; or that folder).',
      inputSchema: strictInput({
        title: z.string().min(1).max(500),
        project: z.string().optional().describe('project id or name (asks the daemon for its repository)'),
        repoPath: z.string().optional().describe('a repository path inside a registered project or the folder this server was started in, used when no project is given'),
      }),
    },
    async ({ title, project, repoPath }) =>
      answer(async () => {
        const path = project ? (await findProject(deps.client, project)).project.repoPath : repoPath === undefined ? deps.cwd : await allowedRepoPath(deps, repoPath);
        return { ...(await suggestTaskMetadata({ title, repoPath: path, provider: deps.provider })) };
      }),
  );
}
