/**
 * `maestro mcp`: the MCP server on stdin/stdout, for agents that speak MCP.
 * Its task tools need the daemon; suggest_task_metadata also works without one.
 * The agent behind suggest_task_metadata: --agent claude (the default where
 * Claude credentials are present), --agent scripted --agent-script <file>, or
 * none (the deterministic heuristic).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { AgentProvider } from '../../agents/types.js';
import { MaestroError } from '../../core/errors.js';
import { existingDir } from '../input.js';
import { action } from '../output.js';
import { clientFor } from './common.js';
import { claudeConfigDir } from '../../config/env.js';
import type { Env } from '../../config/env.js';
import type { CliContext } from '../context.js';

function hasClaudeCredentials(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.ANTHROPIC_API_KEY || env.CLAUDE_CODE_OAUTH_TOKEN || existsSync(join(claudeConfigDir(env), '.credentials.json')));
}

async function chooseProvider(opts: { agent?: string; agentScript?: string }, env: Env): Promise<AgentProvider | null> {
  const kind = opts.agent ?? (hasClaudeCredentials(env) ? 'claude' : 'none');
  if (kind === 'none') return null;
  const { createProvider } = await import('../../agents/index.js');
  if (kind === 'scripted') {
    if (!opts.agentScript) throw new MaestroError('BAD_INPUT', '--agent scripted needs --agent-script <file>.');
    return createProvider({ kind: 'scripted', script: opts.agentScript });
  }
  return createProvider({ kind: 'claude' });
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description('Serve Maestro tools over MCP on stdio (create_task, list_tasks, get_task, approve need the daemon; suggest_task_metadata and search_knowledge, load_knowledge, stage_knowledge do not).')
    .option('--url <url>', 'daemon URL (MAESTRO_URL, else http://127.0.0.1:$MAESTRO_PORT, else the daemon of $MAESTRO_HOME, else :4300)')
    .addOption(new Option('--agent <kind>', 'agent behind suggest_task_metadata (default: claude when credentials exist, else none)').choices(['claude', 'scripted', 'none']))
    .option('--agent-script <file>', 'the script of --agent scripted')
    .option('--root <dir>', 'project whose knowledge search_knowledge / load_knowledge / stage_knowledge use (default: the current folder)', existingDir('--root'))
    .option('--knowledge-only', 'serve the knowledge tools only, with no daemon client (what an agent\'s run gets: it never reads the daemon\'s token)')
    .action(
      action(async (opts: { url?: string; agent?: string; agentScript?: string; root?: string; knowledgeOnly?: boolean }) => {
        // Loaded here so the other commands do not pay for the SDK.
        const [{ StdioServerTransport }, { createMcpServer, createKnowledgeMcpServer }] = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('../../mcp/server.js')]);
        const knowledgeRoot = resolve(opts.root ?? process.cwd());
        const server = opts.knowledgeOnly
          ? createKnowledgeMcpServer({ knowledgeRoot, env: ctx.env })
          : createMcpServer({ client: clientFor({ url: opts.url }, ctx.env), provider: await chooseProvider(opts, ctx.env), cwd: process.cwd(), knowledgeRoot, env: ctx.env });
        const transport = new StdioServerTransport();
        const closed = new Promise<void>((resolve) => {
          transport.onclose = () => resolve();
          process.stdin.once('end', () => resolve());
        });
        await server.connect(transport);
        // The host sees the server's stderr: a message it could not read is said there, not dropped. One over the SDK's
        // buffer (10 MB) ends the connection, and with it the server, which then exits as failed, not as a clean end.
        const seen: { overflow?: Error } = {};
        const onerror = transport.onerror;
        transport.onerror = (err) => {
          process.stderr.write(`maestro mcp: ${err.message}\n`);
          if (/exceeded maximum size/.test(err.message)) seen.overflow ??= err;
          onerror?.(err);
        };
        await closed;
        await server.close();
        if (seen.overflow) throw new MaestroError('BAD_INPUT', `maestro mcp stopped: a message was longer than the MCP SDK reads (${seen.overflow.message}); nothing after it was read.`);
      }),
    );
}
