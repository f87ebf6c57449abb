/**
 * What the knowledge commands share (knowledge.ts: search and load; specKnowhow.ts:
 * spec and knowhow): the one-shot KnowledgeService, option parsers, printers,
 * `history` and `supersede`. Heavy modules are still imported inside the actions.
 */
import { Option, type Command } from 'commander';
import { decodeUtf8, existingDir, integerOption } from '../input.js';
import { action, printJson, printText } from '../output.js';
import type { Knowledge } from '../../knowledge/knowledge.js';
import type { Env } from '../../config/env.js';
import type { CliContext } from '../context.js';
import type { EntryLoad, KnowledgeSearch, ListedEntry } from '../../api/wire/knowledge.js';
import { oneLine } from '../../lib/visible.js';

export interface RootOpts {
  workflowRoot?: string;
  json?: boolean;
}

const serviceModule = () => import('../../knowledge/service.js');

/** A one-shot command: the daemon's KnowledgeService, built for one command (no scan throttle, no watcher), one handle. */
export async function withKnowledge<T>(opts: RootOpts & { readOnlyProbe?: boolean }, env: Env, fn: (k: Knowledge) => Promise<T> | T): Promise<T> {
  const { KnowledgeService, resolveKnowledgeConfig } = await serviceModule();
  const service = new KnowledgeService(resolveKnowledgeConfig(env, { oneShot: true }));
  service.start();
  try {
    return await fn(service.open({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), readOnly: Boolean(opts.readOnlyProbe) }));
  } finally {
    await service.stop();
  }
}

export function intOption(name: string): (value: string) => number {
  return integerOption(`${name} must be an integer 1–200`, 1, 200);
}

/** `--workflow-root`: a folder that must be there (a write would create a mistyped one). */
export function workflowRootOption(confines = 'reads and writes'): Option {
  return new Option('--workflow-root <dir>', `project (or .workflow folder) to confine ${confines} to`).argParser(existingDir('--workflow-root'));
}

export const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);

/** A row of any search page: the mixed page's entries and code symbols, the graph's nodes (`--kg`), the code graph's (`--code`). */
type AnyResult = KnowledgeSearch['results'][number];

/** Knowledge as the terminal shows it (printText), a CRLF line end as a line end. */
const say = (text: string) => printText(text.replace(/\r\n/g, '\n'));

export function printResults(res: { results: readonly AnyResult[]; noMatch?: string | undefined }, header: string): void {
  say(`${header}\n`);
  if (res.results.length === 0) say(`  ${res.noMatch ?? '(no results)'}\n`);
  for (const [i, r] of res.results.entries()) {
    const reason = 'selectionReason' in r && r.selectionReason !== 'relevance' ? ` [${r.selectionReason}]` : '';
    say(`${String(i + 1).padStart(2)}. [${r.kind}] ${oneLine(r.name)}  ${r.id}  ${r.score.toFixed(2)}${reason}\n`);
    const detail = 'snippet' in r ? r.snippet : 'definition' in r ? r.definition : r.signature;
    // A snippet of an entry's body may cross a line end: it stays on the row's second line.
    if (detail) say(`    ${oneLine(detail.slice(0, 160))}\n`);
  }
}

/** The short form `--list` prints: an entry's identities and place, or a code node's (which has no graphId, aliases or type). */
export function brief(e: EntryLoad | ListedEntry) {
  if ('graphId' in e) return { id: e.id, graphId: e.graphId, aliases: e.aliases, kind: e.kind, type: e.type, title: e.title, category: e.category, status: e.status, file: e.file, line: e.line };
  return { id: e.id, kind: e.kind, title: e.name, category: null, status: 'active' as const, file: e.filePath, line: e.line };
}

export function printEntry(e: EntryLoad | ListedEntry, short: boolean): void {
  const b = brief(e);
  // A title from a file an agent may have written: one line, so it cannot start one of its own below (the body follows).
  say(`${b.id}  [${'type' in b ? b.type : b.kind}${b.status === 'deprecated' ? ', deprecated' : ''}]  ${oneLine(b.title)}\n`);
  if (short) return;
  if ('body' in e) {
    if (e.body) say(`\n${e.body.trim()}\n\n`);
  } else if (e.signature) say(`  ${e.filePath}:${e.line ?? ''}  ${e.signature}\n`);
}

/**
 * What a listing that found nothing says, on stderr (the list on stdout stays empty): a `--type` no entry has (a
 * typo; knowhow may declare types of its own, so none is refused), with the types there are; else that nothing
 * matched the filters.
 */
export function saidNothingListed(k: Knowledge, type: string | undefined): void {
  const types = k.types();
  if (type && !types.includes(type)) process.stderr.write(`maestro: no entry has type "${oneLine(type)}". The types here: ${types.join(', ') || 'none (no entry yet)'}.\n`);
  else process.stderr.write('maestro: no entry matches.\n');
}

/** The writer of each kind's `supersede`: the same arguments and answer, so one command serves both. */
const SUPERSEDERS = {
  spec: async () => (await import('../../knowledge/format/specWriter.js')).supersedeSpec,
  knowhow: async () => (await import('../../knowledge/format/knowhowWriter.js')).supersedeKnowhow,
};

/** `maestro spec supersede` and `maestro knowhow supersede`: <old> becomes deprecated, superseded by <new>. */
export function registerSupersede(parent: Command, kind: keyof typeof SUPERSEDERS, description: string, ctx: CliContext): void {
  parent
    .command('supersede')
    .description(description)
    .argument('<old>')
    .argument('<new>')
    .option('--json')
    .addOption(workflowRootOption())
    .action(
      action(async (oldRef: string, newRef: string, opts: RootOpts) => {
        const [{ resolveWorkflowRoot }, supersede] = await Promise.all([import('../../knowledge/format/root.js'), SUPERSEDERS[kind]()]);
        const res = supersede(resolveWorkflowRoot({ ...(opts.workflowRoot ? { workflowRoot: opts.workflowRoot } : {}), env: ctx.env }), oldRef, newRef);
        if (opts.json) printJson(res);
        else say(`${res.replayed ? 'already done' : 'superseded'}: ${res.oldId} → ${res.newId}\n`);
      }),
    );
}

export async function history(ref: string, opts: RootOpts, env: Env): Promise<void> {
  await withKnowledge(opts, env, async (k) => {
    const id = k.resolveId(ref);
    if (!id) await k.load(ref); // throws with the nearest ids
    const chain = k.traverse(id!, 10, 'supersedes');
    const res = { id, chain: chain.map((c) => ({ from: c.from, direction: c.direction === 'out' ? 'supersedes' : 'superseded-by', id: c.id, depth: c.depth })) };
    if (opts.json) printJson(res);
    else {
      say(`${id}\n`);
      for (const c of res.chain) say(`${'  '.repeat(c.depth)}${c.direction} ${c.id}\n`);
    }
  });
}

export function pickDefined<T extends object>(o: T, keys: Array<keyof T>): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return decodeUtf8(Buffer.concat(chunks), 'standard input');
}
