/**
 * `maestro search | load | spec | knowhow`: the knowledge commands. Every
 * heavy module is imported inside the action, so `maestro search` starts
 * without loading what it does not use. Search asks a running daemon (warm
 * index) when there is one and searches in process otherwise
 * (knowledge/search/client.ts says which daemon, and when its answer is not used).
 * spec and knowhow live in specKnowhow.ts, the helpers they share in knowledgeShared.ts.
 */
import type { Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import type { KnowledgeSearch } from '../../api/wire/knowledge.js';
import { action, printJson } from '../output.js';
import { brief, intOption, list, printEntry, printResults, saidNothingListed, withKnowledge, workflowRootOption, type RootOpts } from './knowledgeShared.js';
import { registerKnowhow, registerSpec } from './specKnowhow.js';
import type { CliContext } from '../context.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('search')
    .description('Search specs, knowhow and wiki entries (or --kg the knowledge graph, --code the code graph).')
    .argument('<query...>', 'words to search for')
    .option('--type <type>', 'spec | knowhow | wiki, or a knowhow type (tip, recipe, decision…); with --kg also code')
    .option('--category <category>', 'entry category (coding, arch, …)')
    .option('--tag <tag>', 'keyword or tag')
    .option('--workspace <name>', 'a linked workspace, or "local"')
    .option('--kg', 'search MaestroGraph (knowledge and code nodes)')
    .option('--code', 'search the code graph only')
    .option('--include-deprecated', 'include deprecated entries')
    .option('--diversity <mode>', 'balanced (default) or off')
    .option('--limit <n>', 'results to return (1–200, default 10)', intOption('--limit'))
    .option('--json', 'print JSON')
    .addOption(workflowRootOption())
    .option('--read-only-probe', 'write nothing at all, not even exposure counts')
    .option('--all-projects', 'also observer wiki entries tagged for other projects (proj:<other>)')
    .option('--no-daemon', 'search in this process, never through the daemon (MAESTRO_SEARCH_DAEMON=off)')
    .action(
      action(async (words: string[], { daemon, ...opts }: RootOpts & Record<string, unknown>) => {
        const { parseSearchRequest, runSearch } = await import('../../knowledge/search/params.js');
        const req = parseSearchRequest({ ...opts, query: words.join(' ') });
        let res: KnowledgeSearch | undefined;
        // Not a probe (it writes nothing, not even the daemon's index) and not --code / --kg: the daemon builds
        // its code graph once per index handle, a process on every call, so only this process answers those alike.
        if (daemon !== false && !req.readOnlyProbe && !req.code && !req.kg) {
          const [{ searchViaDaemon }, { resolveWorkflowRoot }] = await Promise.all([import('../../knowledge/search/client.js'), import('../../knowledge/format/root.js')]);
          const root = resolveWorkflowRoot({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), env: ctx.env });
          // The daemon reads `<project>/wiki`; a wiki moved elsewhere by FLOW_* is searched in process, so the answer is the same.
          // (A confined root's wiki never moves: wikiSource and the observer modules it loads, 5 ms, are not needed to know.)
          const wikiMoved = async () => {
            const { wikiRootFor } = await import('../../knowledge/format/wikiSource.js');
            return wikiRootFor(root, ctx.env) !== wikiRootFor({ ...root, confined: true }, ctx.env);
          };
          // The daemon's answer is its route's (GET /api/knowledge/search, src/api/wire/knowledge.ts).
          if (root.confined || !(await wikiMoved())) res = (await searchViaDaemon(req, root.workflowDir, !root.confined, ctx.env)) as KnowledgeSearch | undefined;
        }
        if (res === undefined) res = await withKnowledge({ ...opts, readOnlyProbe: Boolean(req.readOnlyProbe) }, ctx.env, (k) => runSearch(k, req));
        if (opts.json) printJson(res);
        else printResults(res, `${res.count} result(s) for "${req.query}"`);
      }),
    );

  registerLoad(program, ctx);
  registerSpec(program, ctx);
  registerKnowhow(program, ctx);
}

function registerLoad(program: Command, ctx: CliContext): void {
  program
    .command('load')
    .description('Read knowledge entries by id (any alias) or list them by filter.')
    .option('--id <id>', 'canonical id or alias (repeatable via commas)', list)
    .option('--type <type>', 'spec | knowhow | wiki or a knowhow type')
    .option('--category <category>', 'entry category')
    .option('--keyword <keyword>', 'keyword or title word')
    .option('--tag <tag>', 'keyword or tag')
    .option('--list', 'list matching entries (id, title) instead of full content')
    .option('--include-deprecated', 'include deprecated entries')
    .option('--json', 'print JSON')
    .addOption(workflowRootOption('reads'))
    .action(
      action(async (opts: RootOpts & { id?: string[]; type?: string; category?: string; keyword?: string; tag?: string; list?: boolean; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, ctx.env, async (k) => {
          if (opts.id?.length) {
            const entries = [];
            for (const id of opts.id) entries.push(await k.load(id, { includeDeprecated: Boolean(opts.includeDeprecated) }));
            // An explicit load is a consumption in the active run (seed 000 §5.1); search and injection never record.
            const { warning } = (await import('../../knowledge/lifecycle/session/ops.js')).recordConsumed(k.root, entries.filter((e) => 'kind' in e && (e.kind === 'spec' || e.kind === 'knowhow')).map((e) => e.id), ctx.env);
            if (warning) process.stderr.write(`maestro: ${warning}\n`); // the entries are printed all the same
            if (opts.json) return printJson(opts.list ? { count: entries.length, entries: entries.map(brief) } : { count: entries.length, entries });
            for (const e of entries) printEntry(e, Boolean(opts.list));
            return;
          }
          if (!opts.list && !opts.type && !opts.category && !opts.keyword && !opts.tag) throw new MaestroError('BAD_INPUT', 'load needs --id, or --list / a filter (--type, --category, --keyword, --tag).');
          const entries = k.list({ type: opts.type, category: opts.category, keyword: opts.keyword, tag: opts.tag, includeDeprecated: opts.includeDeprecated });
          if (opts.json) return printJson({ count: entries.length, entries: opts.list ? entries.map(brief) : entries });
          if (!entries.length) return saidNothingListed(k, opts.type);
          for (const e of entries) printEntry(e, Boolean(opts.list));
        });
      }),
    );
}
