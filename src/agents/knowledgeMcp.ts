/**
 * The MCP server configuration the claude provider gives every run: a stdio
 * `maestro mcp --knowledge-only --root <project>` (issue 16 item 8), so the
 * agent can search and load the project's specs while it works and stage what
 * it learns. That server has the knowledge tools only and no daemon client: a
 * plain `maestro mcp` would read the daemon's token from the home and offer
 * create_task and approve (an approval merges into main). It gets only what
 * it needs from the environment: the run folder so a load is recorded as
 * consumed and a stage lands in this run, and PATH/HOME.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpStdioServerConfig } from '@anthropic-ai/claude-agent-sdk';

export const KNOWLEDGE_MCP_TOOLS = ['mcp__maestro__search_knowledge', 'mcp__maestro__load_knowledge', 'mcp__maestro__stage_knowledge'];

const PASSED = ['PATH', 'HOME', 'MAESTRO_HOME', 'MAESTRO_RUN_DIR', 'MAESTRO_FROM_SOURCE', 'MAESTRO_EMBEDDINGS_URL', 'MAESTRO_EMBEDDINGS_MODEL', 'MAESTRO_EMBEDDINGS_ONNX', 'MAESTRO_EMBEDDINGS_VOCAB'];

/** `bin/maestro.js` of this installation (from src/agents or dist/agents). */
export function maestroBin(): string {
  const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'maestro.js');
  if (!existsSync(bin)) throw new Error(`maestro's bin/maestro.js is missing (${bin})`);
  return bin;
}

export function knowledgeMcp(projectRoot: string, env: NodeJS.ProcessEnv): { servers: Record<string, McpStdioServerConfig>; allowedTools: string[] } {
  const passed = Object.fromEntries(PASSED.filter((k) => env[k] !== undefined).map((k) => [k, env[k]!]));
  return {
    servers: {
      maestro: { type: 'stdio', command: process.execPath, args: [maestroBin(), 'mcp', '--knowledge-only', '--root', resolve(projectRoot)], env: passed },
    },
    allowedTools: KNOWLEDGE_MCP_TOOLS,
  };
}

