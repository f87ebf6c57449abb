/**
 * `maestro observe` (the terminal UI beside Claude Code, or `--once` for
 * scripts) and `maestro wiki maintain | audit | migrate | lint | redact` (wiki upkeep).
 * The observer is imported inside each action, so registering these commands
 * costs the other commands nothing.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { Option, type Command } from 'commander';
import { existingDir, integerOption } from '../input.js';
import type { SessionView } from '../../api/wire/observer.js';
import { MaestroError } from '../../core/errors.js';
import { EXIT_ERROR, action, printJson, printText } from '../output.js';
import { wikiDirVariable, type Env } from '../../config/env.js';
import type { ObserverConfig } from '../../observer/config.js';
import type { CliContext } from '../context.js';
import { visible } from '../../lib/visible.js';

async function observerConfig(env: Env, overrides: { agent?: string; agentScript?: string } = {}) {
  const [{ resolveObserverConfig }, { checkWikiRoot }] = await Promise.all([import('../../observer/config.js'), import('../../observer/paths.js')]);
  const config = resolveObserverConfig(env, process.cwd(), overrides);
  checkWikiRoot(config.wikiRoot, config.env);
  warnSubfolderWiki(config);
  return config.agent ? await withAgentSandbox(config, env) : config;
}

/**
 * GUI-Anything's rule puts the wiki in the folder the command runs in, and names the project after that folder: run in
 * a repository's subfolder (`src/`), the observer kept a second wiki there whose entries, tagged `proj:src`, the
 * project's search (`<repository>/wiki`) filters out as another project's. Said, not changed: the rule is the format's.
 */
function warnSubfolderWiki(config: ObserverConfig): void {
  const { env, cwd, workspaceRoot, wikiRoot, projectSlug } = config;
  if (wikiDirVariable(env)) return; // a FLOW_* variable chose the wiki
  let here = resolve(cwd);
  try {
    here = realpathSync(here);
  } catch {
    return;
  }
  if (here === workspaceRoot || !here.startsWith(`${workspaceRoot}${sep}`)) return;
  process.stderr.write(visible(`maestro: ${here} is a subfolder of the repository ${workspaceRoot}: the wiki used here is ${wikiRoot} and its entries are tagged proj:${projectSlug}, while maestro search and the board read ${join(workspaceRoot, 'wiki')}. Run it from ${workspaceRoot}, or set FLOW_ROOT_DIR=${workspaceRoot}.\n`));
}

/**
 * The observer's agent reads a person's sessions, which may carry instructions: here too it runs in the agent
 * sandbox the daemon's settings give (auto, bwrap or off), and a sandbox that cannot be had is said on stderr.
 */
async function withAgentSandbox(config: ObserverConfig, env: Env): Promise<ObserverConfig> {
  const [{ resolveConfig }, { observerIn, settleAgentSandbox, announceAgentSandbox }] = await Promise.all([import('../../config/config.js'), import('../../app/agentSandbox.js')]);
  const settled = settleAgentSandbox(resolveConfig({}, env), env);
  const { warning } = announceAgentSandbox(settled.state);
  if (warning) process.stderr.write(visible(`observer: ${warning}\n`));
  return observerIn(settled.config, config);
}

/**
 * What became of the session's bundle in this pass. Once written here, its status is `hit` (the bundle on disk is this
 * one), which read as a cache hit on a first pass that had nothing cached: what was found when it was opened says it.
 */
export function bundleWords(load: SessionView['load']): string {
  const was = (l: { status: string; reason?: string }) => `${l.status}${l.reason ? ` (${l.reason})` : ''}`;
  const found = load.found;
  if (!found || found.status === 'hit') return was(load);
  if (found.status === 'miss' && found.reason === 'bundle_not_found') return 'built from the transcript and written (none was cached)';
  return `written from the transcript (the cached one was ${was(found)})`;
}

function printView(view: SessionView): void {
  const out: string[] = [];
  out.push(`session ${view.sessionId} (${view.jsonlPath})`);
  out.push(`bundle ${bundleWords(view.load)} · ${count(view.explorations.length, 'exploration')} · intent ${view.intent ? `${view.intent.nodeTitle} [${view.intent.intentKey}]` : '—'}`);
  if (view.hold) out.push(`NOT WRITTEN: ${view.hold.detail}`);
  // What was wrong with the bundle found (a corrupted one says where it was set aside); a hold already says it.
  else if (view.load.detail) out.push(view.load.detail);
  for (const ev of view.transcript?.sessionEvents ?? []) out.push(`session: ${ev.kind} at line ${ev.line}${ev.explorationId ? ` (after ${ev.explorationId})` : ''}`);
  if (view.transcript?.issueCount) {
    out.push(`${view.transcript.issueCount} transcript line(s) skipped:`);
    for (const i of view.transcript.issues.slice(0, 5)) out.push(`  line ${i.line}: ${i.reason}`);
  }
  for (const e of view.explorations) {
    out.push('');
    out.push(`${e.id} [${e.status}] ${e.question}`);
    out.push(`  ${count(e.toolCount, 'tool')}${e.toolSummary ? ` (${e.toolSummary})` : ''}${e.errorCount ? ` · ${count(e.errorCount, 'error')}` : ''}`);
    for (const run of e.subagents) out.push(`    ↳ subagent: ${run.prompt.slice(0, 80)} · ${count(run.toolCount, 'tool')}${run.toolSummary ? ` (${run.toolSummary})` : ''}`);
    const k = e.knowledge;
    out.push(`  KNOWLEDGE ${k === undefined ? '(not searched)' : k === null ? '—' : `${k.entryId} ${k.request} (${k.score.toFixed(2)})`}`);
    if (e.summary) out.push(`  SUMMARY (${e.summary.source}${e.summary.reason ? `: ${e.summary.reason.slice(0, 80)}` : ""}) ${e.summary.text.slice(0, 200)}`);
    if (e.wiki) out.push(`  wiki ${e.wiki.targetId ? `${e.wiki.targetId} ` : ''}${e.wiki.status}${e.wiki.reason ? ` · ${e.wiki.reason}` : ''}${e.wiki.turnCount && e.wiki.turnCount > 1 ? ` (${e.wiki.turnCount} turns)` : ''}${e.wiki.proposalId ? ` · proposal ${e.wiki.proposalId} (maestro wiki proposals)` : ''}`);
    const why = e.wiki?.status === 'skipped' && e.wiki.reason ? SKIP_REASONS[e.wiki.reason] : undefined;
    if (why) out.push(`    (${why})`);
  }
  printText(`${out.join('\n')}\n`);
}

/**
 * What the curation skips a person meets first mean, in their words: the reason codes are GUI-Anything's
 * (FORMATS §8.5, §8.7) and the README's prose is far from the line that shows them.
 */
const SKIP_REASONS: Record<string, string> = {
  skill_only_no_prior: 'no agent: the rules only propose updates to wiki entries that exist, never create one; set MAESTRO_OBSERVER_AGENT (or --agent) to have entries written',
  intent_not_wiki_eligible: 'this kind of question (explore, test_verify, general) is not curated into the wiki; FLOW_WIKI_CURATE_INTENTS lists the kinds that are',
  low_value: 'a greeting or a ping with no tool, file or command: nothing to keep',
  no_increment: 'no tool was used and the summary carries no solution: nothing new to keep',
  empty_digest: 'no finished summary to curate yet',
};

/** Upkeep acts on a wiki that is there: anywhere else it is refused, naming where it looked. */
function requireWiki(wikiRoot: string, what: string): void {
  if (existsSync(wikiRoot)) return;
  throw new MaestroError('BAD_INPUT', `There is no wiki at ${wikiRoot} (the folder's wiki/, or FLOW_WIKI_DIR / FLOW_ROOT_DIR): nothing to ${what}, and nothing was written. Run it in the project whose wiki it is; \`maestro observe\` makes one.`);
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * An hour at most: a fallback poll rarer than that is no poll, and past 2147483647 ms (MAX_TIMER_MS) Node's
 * setInterval fires every millisecond instead (`--poll 99999999999` spun the observer).
 */
const MAX_POLL_MS = 3_600_000;
const parsePoll = integerOption(`a poll interval is an integer from 20 to ${MAX_POLL_MS} (ms, an hour)`, 20, MAX_POLL_MS);

export function register(program: Command, ctx: CliContext): void {
  registerObserve(program, ctx);
  const wiki = program.command('wiki').description('Observer wiki upkeep: maintain, audit, migrate, lint, redact.');
  wikiMaintain(wiki, ctx);
  wikiAudit(wiki, ctx);
  wikiMigrate(wiki, ctx);
  wikiProposals(wiki, ctx);
  wikiLint(wiki, ctx);
  wikiRedact(wiki, ctx);
}

function registerObserve(program: Command, ctx: CliContext): void {
  program
    .command('observe')
    .description('Watch a Claude Code session beside it: explorations, prior KNOWLEDGE, summaries, wiki curation.')
    .option('--once', 'one pass without the UI: read, update bundle and index, retrieve, curate, print')
    .option('--session <id|path>', 'session id, transcript path, or Maestro run id (default: FLOW_SESSION_ID, else the newest)')
    .option('--restore', 'show the stored bundle only: no transcript, no live search')
    .option('--poll <ms>', 'fallback poll interval for the live UI', parsePoll)
    .option('--json', 'print JSON (with --once)')
    .option('--adopt-wiki', 'take over a wiki (or bundle) written for another workspace root; without it such a wiki is reported and left alone')
    .addOption(new Option('--agent <kind>', 'the summary and curator agent (default: MAESTRO_OBSERVER_AGENT, else off: deterministic)').choices(['off', 'claude', 'scripted']))
    .option('--agent-script <file>', 'the script of --agent scripted (docs/scripted-agent.md)')
    .action(
      action(async (opts: { once?: boolean; session?: string; restore?: boolean; poll?: number; json?: boolean; agent?: string; agentScript?: string; adoptWiki?: boolean }) => {
        const config = await observerConfig(ctx.env, { ...(opts.agent ? { agent: opts.agent } : {}), ...(opts.agentScript ? { agentScript: opts.agentScript } : {}) });
        const common = { ...(opts.session ? { session: opts.session } : {}), ...(opts.restore ? { restore: true } : {}), ...(opts.adoptWiki ? { adoptWiki: true } : {}) };
        if (opts.once || opts.json) {
          const { observeOnce } = await import('../../observer/observe.js');
          const { view, step } = await observeOnce(config, common);
          if (opts.json) printJson({ session: view, step });
          else printView(view);
          // Nothing was written: say so on stderr and exit 1, so a script notices.
          if (view.hold) {
            process.stderr.write(visible(`observer: ${view.hold.detail}\n`));
            process.exitCode = 1;
          }
          return;
        }
        const { runObserverUi } = await import('../../observer/ui/run.js');
        // Without --session (and FLOW_SESSION_ID) the UI follows the project's newest session as new ones start.
        const follow = !opts.session && !config.env.FLOW_SESSION_ID && !opts.restore;
        await runObserverUi(config, { ...common, ...(opts.poll ? { pollMs: opts.poll } : {}), follow });
      }),
    );
}

/** Audit files that are no audit, on stderr: they are the person's to fix or remove, and nothing acts on them. */
function printUnreadableAudits(unreadable: Array<{ path: string; reason: string }>): void {
  if (!unreadable.length) return;
  process.stderr.write(visible(`${unreadable.length} audit file(s) could not be read; fix or remove them by hand:\n`));
  for (const u of unreadable) process.stderr.write(visible(`  ${u.path}: ${u.reason}\n`));
}

function wikiMaintain(wiki: Command, ctx: CliContext): void {
  wiki
    .command('maintain')
    .description('List audits, report (--dry-run), or apply maintenance.')
    .option('--list-audits', 'list open and resolved audits')
    .option('--dry-run', 'report open audits, lint and intent bucket statistics; change nothing')
    .option('--resolve <audit>', 'also resolve open audits by hand: an audit file as --list-audits names it, or a wiki entry id (all its open audits)')
    .option('--note <text>', 'with --resolve: the resolution written in the audit (default: accepted via wiki-maintain)')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { listAudits?: boolean; dryRun?: boolean; resolve?: string; note?: string; json?: boolean }) => {
        if (opts.resolve !== undefined && (opts.listAudits || opts.dryRun)) throw new MaestroError('BAD_INPUT', `--resolve changes the wiki: it does not go with ${opts.listAudits ? '--list-audits' : '--dry-run'}; nothing was written.`);
        const config = await observerConfig(ctx.env);
        // Upkeep of a wiki that is there: run in any other folder it made one, and said it had rebuilt its index.
        requireWiki(config.wikiRoot, 'maintain');
        const [{ listAudits }, { applyMaintenance, buildMaintenanceReport }] = await Promise.all([import('../../observer/upkeep/audit.js'), import('../../observer/upkeep/maintain.js')]);
        if (opts.listAudits) {
          const audits = listAudits(config.wikiRoot);
          if (opts.json) return printJson(audits);
          printText(`${audits.open.length} open\n`);
          for (const a of audits.open) printText(`  [${a.severity}] ${a.targetId} ${a.filedAt} ${a.file}\n`);
          printText(`${audits.resolved.length} resolved\n`);
          for (const a of audits.resolved) printText(`  ${a.targetId} ${a.resolvedAt ?? ''} ${a.file}\n`);
          printUnreadableAudits(audits.unreadable);
          return;
        }
        if (opts.dryRun) {
          const report = buildMaintenanceReport(config.wikiRoot, config.workspaceRoot, new Date());
          if (opts.json) return printJson(report);
          printText(`wiki ${report.wikiRoot}\n${report.openAudits.length} open audits\n`);
          for (const a of report.openAudits) printText(`  [${a.severity}] ${a.targetId}: ${a.anchor.slice(0, 100)}\n`);
          printUnreadableAudits(report.unreadableAudits);
          printText(`lint: ${report.lint.errors.length} errors, ${report.lint.warnings.length} warnings\n`);
          for (const f of [...report.lint.errors, ...report.lint.warnings]) printText(`  ${f.level} ${f.code}: ${f.message}\n`);
          const b = report.buckets;
          printText(`intent buckets: ${b.buckets} in ${b.sessions} sessions · ${b.curated} curated ${JSON.stringify(b.byStatus)} · ${b.open} open\n`);
          return;
        }
        if (opts.note !== undefined && opts.resolve === undefined) throw new MaestroError('BAD_INPUT', '--note goes with --resolve <audit>; nothing was written.');
        // A person's decision on an audit, checked before anything is written: what it names must be open now.
        const byHand = opts.resolve === undefined ? [] : listAudits(config.wikiRoot).open.filter((a) => a.file === opts.resolve || a.targetId === opts.resolve);
        if (opts.resolve !== undefined && !byHand.length) {
          const open = listAudits(config.wikiRoot).open;
          throw new MaestroError('BAD_INPUT', `--resolve ${JSON.stringify(opts.resolve)} names no open audit (an audit file or an entry id); open now: ${open.map((a) => `${a.file} (${a.targetId})`).join(', ') || 'none'}. Nothing was written.`);
        }
        const maintain = byHand.length ? async () => ({ resolve: byHand.map((a) => ({ file: a.file, note: opts.note ?? 'accepted via wiki-maintain' })) }) : undefined;
        const result = await applyMaintenance(config.wikiRoot, config.workspaceRoot, { now: () => new Date(), ...(maintain ? { maintain } : {}) });
        if (opts.json) return printJson(result);
        printText(`index rebuilt (${result.indexTotal} entries); ${result.movedLegacy.length} legacy folders moved to .trash; ${result.resolved.length} audits resolved, ${result.remaining.length} open${result.unresolved.length ? `, ${result.unresolved.length} not resolved` : ''}\n`);
        for (const a of result.resolved) printText(`  resolved ${a.targetId} (${a.file})\n`);
        for (const u of result.unresolved) process.stderr.write(visible(`maestro: audit not resolved, left as it was: ${u.error}\n`));
        if (result.remaining.length) printText(`an open audit is resolved by the next wiki maintain once its entry is updated (its updated: after the audit) or removed, or by hand: maestro wiki maintain --resolve <file or entry id> [--note <text>]\n`);
        printText(`lint: ${result.lint.errors.length} errors, ${result.lint.warnings.length} warnings\n`);
      }),
    );
}

function wikiAudit(wiki: Command, ctx: CliContext): void {
  wiki
    .command('audit <target-id>')
    .description('File an audit against a wiki entry (what the `k` key does on a KNOWLEDGE card).')
    .option('--severity <level>', 'low | medium | high', 'medium')
    .option('--anchor <text>', 'what was wrong (default: the card was judged wrong)')
    .option('--note <text>', 'notes')
    .option('--session <id>', 'session the card was shown in')
    .option('--exploration <id>', 'exploration the card was shown on')
    .option('--json', 'print JSON')
    .action(
      action(async (targetId: string, opts: { severity?: string; anchor?: string; note?: string; session?: string; exploration?: string; json?: boolean }) => {
        const config = await observerConfig(ctx.env);
        const { fileAudit } = await import('../../observer/upkeep/audit.js');
        const audit = fileAudit(
          config.wikiRoot,
          {
            targetId,
            ...(opts.severity ? { severity: opts.severity } : {}),
            ...(opts.anchor ? { anchor: opts.anchor } : {}),
            ...(opts.note ? { notes: opts.note } : {}),
            ...(opts.session ? { sessionId: opts.session } : {}),
            ...(opts.exploration ? { explorationId: opts.exploration } : {}),
          },
          new Date(),
        );
        if (opts.json) return printJson(audit);
        printText(`audit filed: ${audit.path}\n`);
      }),
    );
}

function wikiMigrate(wiki: Command, ctx: CliContext): void {
  wiki
    .command('migrate')
    .description('Move an older wiki layout (knowledge-base/, per-session cache files) into the current one (exit 1 while a conflict is left in place).')
    .option('--from <dir>', 'the old knowledge-base folder (default: <wiki>/knowledge-base or ../knowledge-base)', existingDir('--from'))
    .option('--dry-run', 'print the plan; change nothing')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { from?: string; dryRun?: boolean; json?: boolean }) => {
        const config = await observerConfig(ctx.env);
        const { migrateWikiLayout } = await import('../../observer/upkeep/migrate.js');
        const result = migrateWikiLayout(config.wikiRoot, { workspaceRoot: config.workspaceRoot, ...(opts.from ? { from: opts.from } : {}), dryRun: Boolean(opts.dryRun), now: new Date() });
        // A conflict is an item left where it was (in a dry run: one that would be): the migration is not done,
        // and a script must be able to tell, as with lint's errors and redact's secrets.
        const conflicts = result.items.filter((i) => i.action === 'conflict').length;
        if (conflicts) process.exitCode = EXIT_ERROR;
        if (opts.json) return printJson(result);
        printText(`${result.dryRun ? 'plan' : 'done'}: ${result.items.length} item(s)${conflicts ? `, ${conflicts} of them conflict(s) left in place` : ''}\n`);
        for (const i of result.items) printText(`  ${i.action} ${i.from}${i.to ? ` → ${i.to}` : ''}${i.note ? ` (${i.note})` : ''}\n`);
      }),
    );
}

function wikiProposals(wiki: Command, ctx: CliContext): void {
  wiki
    .command('proposals')
    .description('Curation proposals waiting for a person (curation without an agent never edits an entry itself): list, accept or dismiss.')
    .option('--accept <id>', 'apply the proposal to its entry')
    .option('--dismiss <id>', 'drop the proposal; the entry is unchanged')
    .option('--note <text>', 'why (kept with the closed proposal)')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { accept?: string; dismiss?: string; note?: string; json?: boolean }) => {
        const config = await observerConfig(ctx.env);
        const { acceptProposal, dismissProposal, listProposals } = await import('../../observer/curation/proposals.js');
        const now = new Date();
        const note = opts.note ? { note: opts.note } : {};
        if (opts.accept && opts.dismiss) throw new MaestroError('BAD_INPUT', 'Pass --accept or --dismiss, not both.');
        if (opts.accept) {
          const { proposal, entry } = acceptProposal(config.wikiRoot, opts.accept, { projectSlug: config.projectSlug, now, ...note });
          return opts.json ? printJson({ proposal, entry: { id: entry.id, relativePath: entry.relativePath } }) : void printText(`accepted ${proposal.id}: ${entry.id} updated (${entry.relativePath})\n`);
        }
        if (opts.dismiss) {
          const proposal = dismissProposal(config.wikiRoot, opts.dismiss, { now, ...note });
          return opts.json ? printJson({ proposal }) : void printText(`dismissed ${proposal.id}; ${proposal.targetId} unchanged\n`);
        }
        const list = listProposals(config.wikiRoot);
        if (opts.json) return printJson(list);
        printText(`${list.open.length} open\n`);
        for (const p of list.open) {
          printText(`  ${p.id} → ${p.targetId} (${p.reason})\n`);
          for (const f of p.newFacts.slice(0, 5)) printText(`      + ${f.slice(0, 160)}\n`);
        }
        for (const p of list.problems) printText(`  skipped ${p.file}: ${p.reason}\n`);
      }),
    );
}

function wikiLint(wiki: Command, ctx: CliContext): void {
  wiki
    .command('lint')
    .description('Check ids, duplicates, leftover legacy folders, index drift, stale drafts and secrets left in wiki files (exit 1 on errors).')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean }) => {
        const config = await observerConfig(ctx.env);
        // In a folder with no wiki, "0 errors" passed a wiki that is not there (a script run in the wrong folder).
        requireWiki(config.wikiRoot, 'lint');
        const { lintWiki } = await import('../../observer/upkeep/lint.js');
        const result = lintWiki(config.wikiRoot, new Date());
        if (opts.json) printJson(result);
        else {
          for (const f of [...result.errors, ...result.warnings]) printText(`${f.level} ${f.code}: ${f.message}\n`);
          printText(`${result.errors.length} errors, ${result.warnings.length} warnings\n`);
        }
        if (result.errors.length) process.exitCode = 1;
      }),
    );
}

function wikiRedact(wiki: Command, ctx: CliContext): void {
  wiki
    .command('redact')
    .description('Replace the secrets wiki files still hold (written before the observer redacted them) with [redacted: <kind>]; exit 1 while any is left.')
    .option('--dry-run', 'list the file, line and kind of each secret; change nothing')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { dryRun?: boolean; json?: boolean }) => {
        const config = await observerConfig(ctx.env);
        const { redactWiki } = await import('../../observer/upkeep/redact.js');
        const result = redactWiki(config.wikiRoot, { dryRun: Boolean(opts.dryRun), now: new Date() });
        // Still holding a secret when this ends: every one found in a dry run, a name in any run.
        if ((result.dryRun && result.files.length) || result.names.length) process.exitCode = 1;
        if (opts.json) return printJson(result);
        const count = result.files.reduce((n, f) => n + f.hits.length, 0);
        for (const f of result.files) for (const h of f.hits) printText(`${f.path}:${h.line}: ${h.kind}\n`);
        for (const n of result.names) printText(`${n.path}: the ${n.isDirectory ? 'folder' : 'file'} name holds a secret (${n.kinds.join(', ')}); rename it by hand\n`);
        if (!result.files.length && !result.names.length) return void printText(`no secrets in ${result.wikiRoot}\n`);
        if (result.dryRun) printText(`${count} secret(s) in ${result.files.length} file(s) would be redacted; run without --dry-run to rewrite them\n`);
        else printText(`${count} secret(s) redacted in ${result.files.length} file(s)\n`);
        if (!result.dryRun && result.files.length) printText('If the wiki was committed, git history still holds them: rewriting it (git filter-repo) is your call.\n');
      }),
    );
}
