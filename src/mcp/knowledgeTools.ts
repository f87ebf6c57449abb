/**
 * Knowledge through MCP (issue 16 item 8): `search_knowledge`,
 * `load_knowledge` and `stage_knowledge` on `maestro mcp`, over the project
 * root the server was started with (`--root`, else the current folder). They
 * run in process — the same library as `maestro search | load | knowledge
 * stage`, so a person's own Claude Code needs no daemon — and read and write
 * only that project's `.workflow/`.
 *
 * Inside an orchestrator run (MAESTRO_RUN_DIR set by the worker), a load is a
 * consumption recorded into that run and a staged candidate lands in that
 * run's ledger; elsewhere a candidate needs a session (`maestro session
 * create`) and goes to its ledger.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { strictInput } from './strictInput.js';
import { MaestroError } from '../core/errors.js';
import type { EntryLoad, MixedSearch } from '../api/wire/knowledge.js';

type Answer = (fn: () => Promise<Record<string, unknown>>) => Promise<{ content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean }>;

export interface KnowledgeToolDeps {
  /** The project (or its `.workflow/`) the tools confine themselves to. */
  root: string;
  env: NodeJS.ProcessEnv;
}

export const KNOWLEDGE_TOOLS = ['search_knowledge', 'load_knowledge', 'stage_knowledge'] as const;

/** Each tool call is a one-shot use of the KnowledgeService (as a CLI command): it scans the files it needs and leaves nothing open. */
async function withK<T>(deps: KnowledgeToolDeps, fn: (k: import('../knowledge/knowledge.js').Knowledge) => Promise<T>): Promise<T> {
  const { KnowledgeService, resolveKnowledgeConfig } = await import('../knowledge/service.js');
  const service = new KnowledgeService(resolveKnowledgeConfig(deps.env, { oneShot: true }));
  service.start();
  try {
    return await fn(service.open({ workflowRoot: deps.root }));
  } finally {
    await service.stop();
  }
}

/** The run a stage or a load belongs to: the orchestrator's run folder, when this server runs inside one. */
async function runOf(env: NodeJS.ProcessEnv): Promise<{ session: string; run: string } | null> {
  const dir = env.MAESTRO_RUN_DIR;
  if (!dir) return null;
  const [{ existsSync }, { join }, { readRunFile }] = await Promise.all([import('node:fs'), import('node:path'), import('../knowledge/lifecycle/session/store.js')]);
  const file = join(dir, 'run.json');
  if (!existsSync(file)) return null;
  // Read as every run.json is (CORRUPT_FILE naming it): a stage must not land in a run it cannot read, nor elsewhere.
  const run = readRunFile(file);
  return { session: run.session_id, run: run.run_id };
}

export function registerKnowledgeTools(server: McpServer, deps: KnowledgeToolDeps, answer: Answer): void {
  server.registerTool(
    'search_knowledge',
    {
      title: 'Search project knowledge',
      description: "Search this project's specs, knowhow and observer wiki (and code symbols once the code graph exists). Returns ids to pass to load_knowledge; says noMatch when nothing really matches.",
      inputSchema: strictInput({
        query: z.string().min(1).max(4096),
        limit: z.number().int().min(1).max(50).optional().describe('default 10'),
        type: z.string().max(200).optional().describe('spec | knowhow | wiki, or a knowhow type (tip, recipe, decision…)'),
        category: z.string().max(200).optional().describe('coding, arch, debug, test, review, learning, ui…'),
      }),
    },
    async ({ query, limit, type, category }) =>
      answer(async () => {
        // The same page GET /api/knowledge/search answers (src/api/wire/knowledge.ts), trimmed to what an agent reads.
        const r: MixedSearch = await withK(deps, (k) => k.searchHybrid(query, { limit: limit ?? 10, type, category }));
        return {
          query: r.query,
          count: r.count,
          ...(r.noMatch ? { noMatch: r.noMatch } : {}),
          results: r.results.map((x) => ({ id: x.id, source: x.source, kind: x.kind, name: x.name, score: x.score, ...(x.source === 'wiki' ? { summary: x.summary, snippet: x.snippet, status: x.status, category: x.category } : { filePath: x.filePath, line: x.line, signature: x.signature }) })),
        };
      }),
  );

  server.registerTool(
    'load_knowledge',
    {
      title: 'Load a knowledge entry',
      description: 'Read one entry in full by any id or alias a search returned (sid, spec:project:…, knowhow-…, wiki:…, code:…). Inside a Maestro run the load is recorded as consumed; when it cannot be, warning says why.',
      inputSchema: strictInput({ id: z.string().min(1).max(500), includeDeprecated: z.boolean().optional() }),
    },
    async ({ id, includeDeprecated }) =>
      answer(async () => {
        const entry: EntryLoad = await withK(deps, (k) => k.load(id, { includeDeprecated: Boolean(includeDeprecated) }));
        if ('kind' in entry && (entry.kind === 'spec' || entry.kind === 'knowhow')) {
          const [{ recordConsumed }, { resolveWorkflowRoot }] = await Promise.all([import('../knowledge/lifecycle/session/ops.js'), import('../knowledge/format/root.js')]);
          const { warning } = recordConsumed(resolveWorkflowRoot({ workflowRoot: deps.root, env: deps.env }), [entry.id], deps.env);
          // The entry is answered all the same; the warning names the run's file that kept the load from being recorded.
          if (warning) return { entry, warning };
        }
        return { entry };
      }),
  );

  server.registerTool(
    'stage_knowledge',
    {
      title: 'Stage a knowledge candidate',
      description:
        'Propose a decision or constraint worth keeping. It is staged as a pending candidate (never written to the specs directly): a person reviews and promotes it. Inside a Maestro run it goes to that run; otherwise pass a session.',
      inputSchema: strictInput({
        target: z.enum(['spec', 'knowhow']),
        title: z.string().min(1).max(200),
        content: z.string().min(1).max(8000),
        category: z.enum(['coding', 'arch', 'debug', 'test', 'review', 'learning', 'ui']).optional(),
        action: z.enum(['propose', 'reaffirm', 'supersede', 'contest']).optional().describe('default propose'),
        session: z.string().max(128).optional().describe('a session id, when not inside a Maestro run'),
      }),
    },
    async ({ target, title, content, category, action, session }) =>
      answer(async () => {
        const [{ stage }, { resolveWorkflowRoot }] = await Promise.all([import('../knowledge/lifecycle/session/ops.js'), import('../knowledge/format/root.js')]);
        const root = resolveWorkflowRoot({ workflowRoot: deps.root, env: deps.env });
        const run = await runOf(deps.env);
        const where = run ?? (session ? { session } : null);
        if (!where) throw new MaestroError('BAD_INPUT', 'stage_knowledge needs a session outside a Maestro run (maestro session create <id>, then pass session).');
        const r = stage(root, { target, title, content, category, action, evidence: ['inline:mcp'], ...where }, deps.env);
        return { candidate_id: r.candidate.candidate_id, status: r.candidate.status, occurrences: r.candidate.occurrences, ledger: r.ledger };
      }),
  );
}
