/**
 * `maestro spec …` and `maestro knowhow …`: one registering function per
 * subcommand. The writers are imported inside each action (knowledge.ts says why).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { action, printJson, printText } from '../output.js';
import { oneLine } from '../../lib/visible.js';
import { brief, history, intOption, list, pickDefined, printEntry, printResults, readStdin, registerSupersede, saidNothingListed, withKnowledge, workflowRootOption, type RootOpts } from './knowledgeShared.js';
import type { CliContext } from '../context.js';
import type { SpecCategory } from '../../knowledge/format/specParser.js';

export function registerSpec(program: Command, ctx: CliContext): void {
  const spec = program.command('spec').description('Project specs: rules and constraints in .workflow/specs/.');
  specList(spec, ctx);
  specAdd(spec, ctx);
  specHealth(spec, ctx);
  registerSupersede(spec, 'spec', 'Mark <old> deprecated and superseded by <new> (sids or ids).', ctx);
  specDeprecate(spec, ctx);
  specHistory(spec, ctx);
  specConflict(spec, ctx);
}

/** specParser's VALID_CATEGORIES, written out: importing the parser would load the YAML reader into every command's start. */
const SPEC_CATEGORIES = ['coding', 'arch', 'debug', 'test', 'review', 'learning', 'ui'] as const satisfies readonly SpecCategory[];

/** `maestro spec list`: the spec entries, by category. */
function specList(spec: Command, ctx: CliContext): void {
  spec
    .command('list')
    .description('List spec entries.')
    // A category none can have listed nothing and exited 0, as an empty store did: a typo looked like no entries.
    .addOption(new Option('--category <category>').choices(SPEC_CATEGORIES))
    .option('--include-deprecated')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (opts: RootOpts & { category?: string; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, ctx.env, (k) => {
          const entries = k.list({ type: 'spec', category: opts.category, includeDeprecated: opts.includeDeprecated });
          if (opts.json) return printJson({ count: entries.length, entries: entries.map(brief) });
          if (!entries.length) process.stderr.write(`maestro: no spec entry${opts.category ? ` in category ${opts.category}` : ''}${opts.includeDeprecated ? '' : ' (deprecated ones are listed with --include-deprecated)'}. \`maestro spec add <category> <title> <content> --keywords <list>\` adds one.\n`);
          for (const e of entries) printEntry(e, true);
        });
      }),
    );
}

/** The scopes `spec add` writes to (AppendSpecInput.scope). */
const SPEC_SCOPES = ['project', 'team', 'personal', 'global'] as const;

/** `maestro spec add`: appends one entry. */
function specAdd(spec: Command, ctx: CliContext): void {
  spec
    .command('add')
    .description('Append a spec entry (lock-guarded atomic write).')
    .argument('<category>', 'coding | arch | debug | test | review | learning | ui')
    .argument('<title>')
    .argument('<content...>')
    .requiredOption('--keywords <list>', 'comma-separated keywords (required)', list)
    .option('--description <text>')
    .option('--source <text>')
    .option('--confidence <level>', 'high | medium | low | contested')
    .addOption(new Option('--scope <scope>', 'where the entry is kept (default project)').choices(SPEC_SCOPES))
    .option('--allow-duplicate-title')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (category: string, title: string, content: string[], opts: RootOpts & { keywords: string[]; description?: string; source?: string; confidence?: string; scope?: (typeof SPEC_SCOPES)[number]; allowDuplicateTitle?: boolean }) => {
        const [{ resolveWorkflowRoot }, { appendSpecEntry, checkConfidence }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/specWriter.js')]);
        // Named as the user typed it; the writer checks again for its other callers.
        const { confidence: level, ...rest } = opts;
        const confidence = level === undefined ? {} : { confidence: checkConfidence(level, '--confidence') };
        const root = resolveWorkflowRoot({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), env: ctx.env });
        const res = appendSpecEntry(root, { category, title, content: content.join(' '), keywords: opts.keywords, ...pickDefined(rest, ['description', 'source', 'scope', 'allowDuplicateTitle']), ...confidence });
        if (opts.json) printJson(res);
        else printText(res.outcome === 'created' ? `created ${res.id} (${res.sid})\n` : `skipped: an entry titled "${title}" exists (${res.id})\n`);
      }),
    );
}

/** `maestro spec health`: unparseable entries and lifecycle problems; exit code 1 when any is an error. */
function specHealth(spec: Command, ctx: CliContext): void {
  spec
    .command('health')
    .description('Report unparseable entries and lifecycle problems with file and line.')
    .option('--kind <kind>', 'spec (default) | knowhow | wiki (the observer wiki) | all', (v: string) => {
      if (!['spec', 'knowhow', 'wiki', 'all'].includes(v)) throw new InvalidArgumentError(`--kind must be spec, knowhow, wiki or all, got "${v}".`);
      return v;
    })
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (opts: RootOpts & { kind?: string }) => {
        await withKnowledge(opts, ctx.env, (k) => {
          const kind = opts.kind ?? 'spec';
          const h = k.health(kind === 'all' ? undefined : (kind as 'spec' | 'knowhow' | 'wiki'));
          if (opts.json) printJson(h);
          else {
            printText(`${h.entries} entries, ${h.errors} error(s), ${h.warnings} warning(s)\n`);
            for (const f of h.findings) printText(`${f.severity === 'error' ? 'error' : 'warn '} ${oneLine(f.file)}:${f.line} ${f.code}: ${oneLine(f.message)}\n`);
          }
          if (!h.ok) process.exitCode = 1;
        });
      }),
    );
}

/** `maestro spec deprecate`: marks an entry deprecated. */
function specDeprecate(spec: Command, ctx: CliContext): void {
  spec
    .command('deprecate')
    .description('Mark a spec entry deprecated (kept in the file and the evolution chain).')
    .argument('<id>')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (ref: string, opts: RootOpts) => {
        const [{ resolveWorkflowRoot }, { deprecateSpec }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/specWriter.js')]);
        const res = deprecateSpec(resolveWorkflowRoot({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), env: ctx.env }), ref);
        if (opts.json) printJson(res);
        else printText(`${res.replayed ? 'already deprecated' : 'deprecated'}: ${res.id}\n`);
      }),
    );
}

/** `maestro spec history`: the evolution chain of an entry. */
function specHistory(spec: Command, ctx: CliContext): void {
  spec
    .command('history')
    .description('The evolution chain of an entry (supersedes in both directions).')
    .argument('<id>')
    .option('--json')
    .addOption(workflowRootOption())
    .action(action(async (ref: string, opts: RootOpts) => history(ref, opts, ctx.env)));
}

/** `maestro spec conflict`: marks an entry contested. */
function specConflict(spec: Command, ctx: CliContext): void {
  spec
    .command('conflict')
    .description('Mark an entry contested with a note (conflict marker).')
    .argument('<id>')
    .requiredOption('--note <text>')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (ref: string, opts: RootOpts & { note: string }) => {
        const [{ resolveWorkflowRoot }, { markSpecConflict }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/specWriter.js')]);
        const res = markSpecConflict(resolveWorkflowRoot({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), env: ctx.env }), ref, opts.note);
        if (opts.json) printJson(res);
        else printText(`marked ${res.id} contested (${res.marker})\n`);
      }),
    );
}

export function registerKnowhow(program: Command, ctx: CliContext): void {
  const kh = program.command('knowhow').description('Knowhow documents: decisions, recipes, references, templates in .workflow/knowhow/.');
  knowhowAdd(kh, ctx);
  knowhowList(kh, ctx);
  knowhowGet(kh, ctx);
  knowhowSearch(kh, ctx);
  registerSupersede(kh, 'knowhow', 'Mark <old> deprecated and superseded by <new>.', ctx);
  knowhowHistory(kh, ctx);
}

/** `maestro knowhow add`: writes one document (body from --body or stdin). */
function knowhowAdd(kh: Command, ctx: CliContext): void {
  kh.command('add')
    .description('Write a knowhow document (replay-safe with --id).')
    .argument('<type>', 'session | tip | template | recipe | reference | decision | asset | blueprint | document')
    .argument('<title>')
    .option('--body <text>', 'document body (default: standard input, when it is not a terminal)')
    .option('--description <text>')
    .option('--category <category>')
    .option('--keywords <list>', 'comma-separated', list)
    .option('--tags <list>', 'comma-separated', list)
    .option('--id <explicitId>', 'explicit id, e.g. tip-20260427-my-slug')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (type: string, title: string, opts: RootOpts & { body?: string; description?: string; category?: string; keywords?: string[]; tags?: string[]; id?: string }) => {
        const [{ resolveWorkflowRoot }, { addKnowhow }] = await Promise.all([import('../../knowledge/format/root.js'), import('../../knowledge/format/knowhowWriter.js')]);
        // A terminal is not read (no one would know it waits for the text), and an empty document is no one's knowhow.
        const body = opts.body ?? (process.stdin.isTTY ? '' : await readStdin());
        if (!body.trim()) throw new MaestroError('BAD_INPUT', 'knowhow add needs a body: give it with --body <text>, or pipe the text on standard input. Nothing was written.');
        const res = addKnowhow(resolveWorkflowRoot({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), env: ctx.env }), {
          type,
          title,
          body,
          ...pickDefined(opts, ['description', 'category', 'keywords', 'tags']),
          ...(opts.id ? { explicitId: opts.id } : {}),
        });
        if (opts.json) printJson(res);
        else printText(`${res.message} (${res.path})\n`);
      }),
    );
}

/** `maestro knowhow list`: the knowhow documents. */
function knowhowList(kh: Command, ctx: CliContext): void {
  kh.command('list')
    .description('List knowhow documents.')
    .option('--type <type>')
    .option('--include-deprecated')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (opts: RootOpts & { type?: string; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, ctx.env, (k) => {
          const entries = k.list({ type: opts.type ?? 'knowhow', includeDeprecated: opts.includeDeprecated }).filter((e) => e.kind === 'knowhow');
          if (opts.json) return printJson({ count: entries.length, entries: entries.map(brief) });
          if (!entries.length) return saidNothingListed(k, opts.type);
          for (const e of entries) printEntry(e, true);
        });
      }),
    );
}

/** `maestro knowhow get`: one document, by any alias. */
function knowhowGet(kh: Command, ctx: CliContext): void {
  kh.command('get')
    .description('Print one knowhow document (any alias).')
    .argument('<id>')
    .option('--include-deprecated')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (ref: string, opts: RootOpts & { includeDeprecated?: boolean }) => {
        await withKnowledge(opts, ctx.env, async (k) => {
          const e = await k.load(ref, { includeDeprecated: Boolean(opts.includeDeprecated) });
          if ((e as { kind?: string }).kind !== 'knowhow') throw new MaestroError('BAD_INPUT', `${ref} is not a knowhow document.`);
          if (opts.json) printJson(e);
          else printEntry(e, false);
        });
      }),
    );
}

/** `maestro knowhow search`: searches knowhow documents only. */
function knowhowSearch(kh: Command, ctx: CliContext): void {
  kh.command('search')
    .description('Search knowhow documents only.')
    .argument('<query...>')
    .option('--limit <n>', 'results (1–200)', intOption('--limit'))
    .option('--include-deprecated')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (words: string[], opts: RootOpts & { limit?: number; includeDeprecated?: boolean }) => {
        await withKnowledge(opts, ctx.env, (k) => {
          const res = k.search(words.join(' '), { type: 'knowhow', limit: opts.limit, includeDeprecated: opts.includeDeprecated });
          if (opts.json) printJson(res);
          else printResults(res, `${res.count} knowhow result(s)`);
        });
      }),
    );
}

/** `maestro knowhow history`: the evolution chain of a document. */
function knowhowHistory(kh: Command, ctx: CliContext): void {
  kh.command('history')
    .description('The evolution chain of a knowhow document.')
    .argument('<id>')
    .option('--json')
    .addOption(workflowRootOption())
    .action(action(async (ref: string, opts: RootOpts) => history(ref, opts, ctx.env)));
}
