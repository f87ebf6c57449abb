/**
 * `maestro search | load | spec | knowhow`: the knowledge commands. Every
 * heavy module is imported inside the action, so `maestro search` starts
 * without loading what it does not use. Search asks a running daemon (warm
 * index) when there is one and searches in process otherwise
 * (knowledge/search/client.ts says which daemon, and when its answer is not used).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { action, printJson } from '../output.js';
import type { Knowledge } from '../../knowledge/knowledge.js';

interface RootOpts {
  workflowRoot?: string;
  json?: boolean;
}

const serviceModule = () => import('../../knowledge/service.js');

/** A one-shot command: the daemon's KnowledgeService, built for one command (no scan throttle, no watcher), one handle. */
async function withKnowledge<T>(opts: RootOpts & { readOnlyProbe?: boolean }, fn: (k: Knowledge) => Promise<T> | T): Promise<T> {
  const { KnowledgeService, resolveKnowledgeConfig } = await serviceModule();
  const service = new KnowledgeService(resolveKnowledgeConfig(process.env, { oneShot: true }));
  service.start();
  try {
    return await fn(service.open({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), readOnly: Boolean(opts.readOnlyProbe) }));
  } finally {
    await service.stop();
  }
}

function intOption(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 200) throw new InvalidArgumentError(`${name} must be an integer 1–200, got "${v}".`);
    return n;
  };
}

const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);

function printResults(res: { results: Array<Record<string, unknown>>; noMatch?: unknown }, header: string): void {
  process.stdout.write(`${header}\n`);
  if (res.results.length === 0) process.stdout.write(`  ${typeof res.noMatch === 'string' ? res.noMatch : '(no results)'}\n`);
  for (const [i, r] of res.results.entries()) {
    const kind = r.kind ?? r.sourceType;
    const reason = r.selectionReason && r.selectionReason !== 'relevance' ? ` [${String(r.selectionReason)}]` : '';
    process.stdout.write(`${String(i + 1).padStart(2)}. [${String(kind)}] ${String(r.name)}  ${String(r.id)}  ${Number(r.score ?? 0).toFixed(2)}${reason}\n`);
    const detail = (r.snippet ?? r.definition ?? r.signature ?? '') as string;
    if (detail) process.stdout.write(`    ${detail.slice(0, 160)}\n`);
  }
}

export function register(program: Command): void {
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
    .option('--workflow-root <dir>', 'project (or .workflow folder) to confine reads and writes to')
    .option('--read-only-probe', 'write nothing at all, not even exposure counts')
    .option('--all-projects', 'also observer wiki entries tagged for other projects (proj:<other>)')
    .action(
      action(async (words: string[], opts: RootOpts & Record<string, unknown>) => {
        const { parseSearchRequest, runSearch } = await import('../../knowledge/search/params.js');
        const req = parseSearchRequest({ ...opts, query: words.join(' ') });
        let res: unknown;
        // Not a probe (it writes nothing, not even the daemon's index) and not --code / --kg: the daemon builds
        // its code graph once per index handle, a process on every call, so only this process answers those alike.
        if (!req.readOnlyProbe && !req.code && !req.kg) {
          const [{ searchViaDaemon }, { resolveWorkflowRoot }] = await Promise.all([import('../../knowledge/search/client.js'), import('../../knowledge/format/root.js')]);
          const root = resolveWorkflowRoot(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {});
          // The daemon reads `<project>/wiki`; a wiki moved elsewhere by FLOW_* is searched in process, so the answer is the same.
          // (A confined root's wiki never moves: wikiSource and the observer modules it loads, 5 ms, are not needed to know.)
          const wikiMoved = async () => {
            const { wikiRootFor } = await import('../../knowledge/format/wikiSource.js');
            return wikiRootFor(root) !== wikiRootFor({ ...root, confined: true });
          };
          if (root.confined || !(await wikiMoved())) res = await searchViaDaemon(req, root.workflowDir, !root.confined);
        }
        if (res === undefined) res = await withKnowledge({ ...opts, readOnlyProbe: Boolean(req.readOnlyProbe) }, (k) => runSearch(k, req));
        if (opts.json) printJson(res);
        else printResults(res as { results: Array<Record<string, unknown>> }, `${(res as { count: number }).count} result(s) for "${req.query}"`);
      }),
    );

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
    .option('--workflow-root <dir>', 'project (or .workflow folder) to confine reads to')
    .action(
      action(async (opts: RootOpts & { id?: string[]; type?: string; category?: string; keyword?: string; tag?: string; list?: boolean; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, async (k) => {
          if (opts.id?.length) {
            const entries = [];
            for (const id of opts.id) entries.push(await k.load(id, { includeDeprecated: Boolean(opts.includeDeprecated) }));
            // An explicit load is a consumption in the active run (seed 000 §5.1); search and injection never record.
            (await import('../../knowledge/lifecycle/session/ops.js')).recordConsumed(k.root, entries.filter((e) => 'kind' in e && (e.kind === 'spec' || e.kind === 'knowhow')).map((e) => e.id));
            if (opts.json) return printJson(opts.list ? { count: entries.length, entries: entries.map(brief) } : { count: entries.length, entries });
            for (const e of entries) printEntry(e as unknown as Record<string, unknown>, Boolean(opts.list));
            return;
          }
          if (!opts.list && !opts.type && !opts.category && !opts.keyword && !opts.tag) throw new MaestroError('BAD_INPUT', 'load needs --id, or --list / a filter (--type, --category, --keyword, --tag).');
          const entries = k.list({ type: opts.type, category: opts.category, keyword: opts.keyword, tag: opts.tag, includeDeprecated: opts.includeDeprecated });
          if (opts.json) return printJson({ count: entries.length, entries: opts.list ? entries.map(brief) : entries });
          for (const e of entries) printEntry(e as unknown as Record<string, unknown>, Boolean(opts.list));
        });
      }),
    );

  registerSpec(program);
  registerKnowhow(program);
}

function brief(e: unknown): Record<string, unknown> {
  const x = e as Record<string, unknown>;
  return { id: x.id, graphId: x.graphId, aliases: x.aliases, kind: x.kind, type: x.type, title: x.title ?? x.name, category: x.category ?? null, status: x.status ?? 'active', file: x.file ?? x.filePath, line: x.line ?? null };
}

function printEntry(e: Record<string, unknown>, short: boolean): void {
  const b = brief(e);
  process.stdout.write(`${String(b.id)}  [${String(b.type ?? b.kind)}${b.status === 'deprecated' ? ', deprecated' : ''}]  ${String(b.title)}\n`);
  if (short) return;
  if (e.body) process.stdout.write(`\n${String(e.body).trim()}\n\n`);
  else if (e.signature) process.stdout.write(`  ${String(e.filePath)}:${String(e.line ?? '')}  ${String(e.signature)}\n`);
}

function registerSpec(program: Command): void {
  const spec = program.command('spec').description('Project specs: rules and constraints in .workflow/specs/.');
  spec
    .command('list')
    .description('List spec entries.')
    .option('--category <category>')
    .option('--include-deprecated')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (opts: RootOpts & { category?: string; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, (k) => {
          const entries = k.list({ type: 'spec', category: opts.category, includeDeprecated: opts.includeDeprecated });
          if (opts.json) return printJson({ count: entries.length, entries: entries.map(brief) });
          for (const e of entries) printEntry(e as unknown as Record<string, unknown>, true);
        });
      }),
    );
  spec
    .command('add')
    .description('Append a spec entry (lock-guarded atomic write).')
    .argument('<category>', 'coding | arch | debug | test | review | learning | ui')
    .argument('<title>')
    .argument('<content...>')
    .requiredOption('--keywords <list>', 'comma-separated keywords', list)
    .option('--description <text>')
    .option('--source <text>')
    .option('--confidence <level>', 'high | medium | low')
    .option('--scope <scope>', 'project (default) | team | personal | global')
    .option('--allow-duplicate-title')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (category: string, title: string, content: string[], opts: RootOpts & { keywords: string[]; description?: string; source?: string; confidence?: 'high'; scope?: 'project'; allowDuplicateTitle?: boolean }) => {
        const [{ resolveWorkflowRoot }, { appendSpecEntry }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/specWriter.js')]);
        const root = resolveWorkflowRoot(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {});
        const res = appendSpecEntry(root, { category, title, content: content.join(' '), keywords: opts.keywords, ...pickDefined(opts, ['description', 'source', 'confidence', 'scope', 'allowDuplicateTitle']) });
        if (opts.json) printJson(res);
        else process.stdout.write(res.outcome === 'created' ? `created ${res.id} (${res.sid})\n` : `skipped: an entry titled "${title}" exists (${res.id})\n`);
      }),
    );
  spec
    .command('health')
    .description('Report unparseable entries and lifecycle problems with file and line.')
    .option('--kind <kind>', 'spec (default) | knowhow | wiki (the observer wiki) | all', (v: string) => {
      if (!['spec', 'knowhow', 'wiki', 'all'].includes(v)) throw new InvalidArgumentError(`--kind must be spec, knowhow, wiki or all, got "${v}".`);
      return v;
    })
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (opts: RootOpts & { kind?: string }) => {
        await withKnowledge(opts, (k) => {
          const kind = opts.kind ?? 'spec';
          const h = k.health(kind === 'all' ? undefined : (kind as 'spec' | 'knowhow' | 'wiki'));
          if (opts.json) printJson(h);
          else {
            process.stdout.write(`${h.entries} entries, ${h.errors} error(s), ${h.warnings} warning(s)\n`);
            for (const f of h.findings) process.stdout.write(`${f.severity === 'error' ? 'error' : 'warn '} ${f.file}:${f.line} ${f.code}: ${f.message}\n`);
          }
          if (!h.ok) process.exitCode = 1;
        });
      }),
    );
  registerSupersede(spec, 'spec', 'Mark <old> deprecated and superseded by <new> (sids or ids).');
  spec
    .command('deprecate')
    .description('Mark a spec entry deprecated (kept in the file and the evolution chain).')
    .argument('<id>')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (ref: string, opts: RootOpts) => {
        const [{ resolveWorkflowRoot }, { deprecateSpec }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/specWriter.js')]);
        const res = deprecateSpec(resolveWorkflowRoot(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), ref);
        if (opts.json) printJson(res);
        else process.stdout.write(`${res.replayed ? 'already deprecated' : 'deprecated'}: ${res.id}\n`);
      }),
    );
  spec
    .command('history')
    .description('The evolution chain of an entry (supersedes in both directions).')
    .argument('<id>')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(action(async (ref: string, opts: RootOpts) => history(ref, opts)));
  spec
    .command('conflict')
    .description('Mark an entry contested with a note (conflict marker).')
    .argument('<id>')
    .requiredOption('--note <text>')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (ref: string, opts: RootOpts & { note: string }) => {
        const [{ resolveWorkflowRoot }, { markSpecConflict }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/specWriter.js')]);
        const res = markSpecConflict(resolveWorkflowRoot(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), ref, opts.note);
        if (opts.json) printJson(res);
        else process.stdout.write(`marked ${res.id} contested (${res.marker})\n`);
      }),
    );
}

/** The writer of each kind's `supersede`: the same arguments and answer, so one command serves both. */
const SUPERSEDERS = {
  spec: async () => (await import('../../knowledge/format/specWriter.js')).supersedeSpec,
  knowhow: async () => (await import('../../knowledge/format/knowhowWriter.js')).supersedeKnowhow,
};

/** `maestro spec supersede` and `maestro knowhow supersede`: <old> becomes deprecated, superseded by <new>. */
function registerSupersede(parent: Command, kind: keyof typeof SUPERSEDERS, description: string): void {
  parent
    .command('supersede')
    .description(description)
    .argument('<old>')
    .argument('<new>')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (oldRef: string, newRef: string, opts: RootOpts) => {
        const [{ resolveWorkflowRoot }, supersede] = await Promise.all([import('../../knowledge/format/root.js'), SUPERSEDERS[kind]()]);
        const res = supersede(resolveWorkflowRoot(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), oldRef, newRef);
        if (opts.json) printJson(res);
        else process.stdout.write(`${res.replayed ? 'already done' : 'superseded'}: ${res.oldId} → ${res.newId}\n`);
      }),
    );
}

async function history(ref: string, opts: RootOpts): Promise<void> {
  await withKnowledge(opts, async (k) => {
    const id = k.resolveId(ref);
    if (!id) await k.load(ref); // throws with the nearest ids
    const chain = k.traverse(id!, 10, 'supersedes');
    const res = { id, chain: chain.map((c) => ({ from: c.from, direction: c.direction === 'out' ? 'supersedes' : 'superseded-by', id: c.id, depth: c.depth })) };
    if (opts.json) printJson(res);
    else {
      process.stdout.write(`${id}\n`);
      for (const c of res.chain) process.stdout.write(`${'  '.repeat(c.depth)}${c.direction} ${c.id}\n`);
    }
  });
}

function pickDefined<T extends object>(o: T, keys: Array<keyof T>): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

function registerKnowhow(program: Command): void {
  const kh = program.command('knowhow').description('Knowhow documents: decisions, recipes, references, templates in .workflow/knowhow/.');
  kh.command('add')
    .description('Write a knowhow document (replay-safe with --id).')
    .argument('<type>', 'session | tip | template | recipe | reference | decision | asset | blueprint | document')
    .argument('<title>')
    .option('--body <text>', 'document body (default: read stdin)')
    .option('--description <text>')
    .option('--category <category>')
    .option('--keywords <list>', 'comma-separated', list)
    .option('--tags <list>', 'comma-separated', list)
    .option('--id <explicitId>', 'explicit id, e.g. tip-20260427-my-slug')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (type: string, title: string, opts: RootOpts & { body?: string; description?: string; category?: string; keywords?: string[]; tags?: string[]; id?: string }) => {
        const [{ resolveWorkflowRoot }, { addKnowhow }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/knowhowWriter.js')]);
        const body = opts.body ?? (process.stdin.isTTY ? '' : await readStdin());
        const res = addKnowhow(resolveWorkflowRoot(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), {
          type,
          title,
          body,
          ...pickDefined(opts, ['description', 'category', 'keywords', 'tags']),
          ...(opts.id ? { explicitId: opts.id } : {}),
        });
        if (opts.json) printJson(res);
        else process.stdout.write(`${res.message} (${res.path})\n`);
      }),
    );
  kh.command('list')
    .description('List knowhow documents.')
    .option('--type <type>')
    .option('--include-deprecated')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (opts: RootOpts & { type?: string; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, (k) => {
          const entries = k.list({ type: opts.type ?? 'knowhow', includeDeprecated: opts.includeDeprecated }).filter((e) => e.kind === 'knowhow');
          if (opts.json) return printJson({ count: entries.length, entries: entries.map(brief) });
          for (const e of entries) printEntry(e as unknown as Record<string, unknown>, true);
        });
      }),
    );
  kh.command('get')
    .description('Print one knowhow document (any alias).')
    .argument('<id>')
    .option('--include-deprecated')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (ref: string, opts: RootOpts & { includeDeprecated?: boolean }) => {
        await withKnowledge(opts, async (k) => {
          const e = await k.load(ref, { includeDeprecated: Boolean(opts.includeDeprecated) });
          if ((e as { kind?: string }).kind !== 'knowhow') throw new MaestroError('BAD_INPUT', `${ref} is not a knowhow document.`);
          if (opts.json) printJson(e);
          else printEntry(e as unknown as Record<string, unknown>, false);
        });
      }),
    );
  kh.command('search')
    .description('Search knowhow documents only.')
    .argument('<query...>')
    .option('--limit <n>', 'results (1–200)', intOption('--limit'))
    .option('--include-deprecated')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(
      action(async (words: string[], opts: RootOpts & { limit?: number; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, (k) => {
          const res = k.search(words.join(' '), { type: 'knowhow', limit: opts.limit, includeDeprecated: opts.includeDeprecated });
          if (opts.json) printJson(res);
          else printResults(res as unknown as { results: Array<Record<string, unknown>> }, `${res.count} knowhow result(s)`);
        });
      }),
    );
  registerSupersede(kh, 'knowhow', 'Mark <old> deprecated and superseded by <new>.');
  kh.command('history')
    .description('The evolution chain of a knowhow document.')
    .argument('<id>')
    .option('--json')
    .option('--workflow-root <dir>')
    .action(action(async (ref: string, opts: RootOpts) => history(ref, opts)));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
