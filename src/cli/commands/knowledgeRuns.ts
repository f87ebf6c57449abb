/**
 * `maestro session create|list|show|seal`, the knowledge lifecycle half of
 * `maestro run` (create|complete|check|seal — added to the same group as the
 * daemon's `run list|show`), and `maestro knowledge
 * stage|record|review|promote|audit` (seed 000 §5–10). Every command takes
 * `--workflow-root` and confines reads and writes to it.
 */
import type { Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { FINISHED_STATUSES, type TaskStatus } from '../../core/status.js';
import type { ReviewResult } from '../../api/wire/knowledgeReview.js';
import type { LifecycleContext } from '../../knowledge/lifecycle/context.js';
import type { WorkflowRoot } from '../../knowledge/format/root.js';
import type { Action, InputSource, Signal } from '../../knowledge/lifecycle/ledger/ledger.js';
import { readTextFile } from '../input.js';
import { workflowRootOption } from './knowledgeShared.js';
import { action, printJson, printText } from '../output.js';
import { oneLine, visible } from '../../lib/visible.js';
import type { Env } from '../../config/env.js';
import type { CliContext } from '../context.js';
import { taskStanding } from './taskStanding.js';
import { leftToDecide, sessionIdFor } from '../../core/supersededVersion.js';

interface RootOpts {
  workflowRoot?: string;
  json?: boolean;
}

// Loaded on use: `maestro --help` and the daemon commands do not pay for the knowledge modules.
const lib = () => import('../../knowledge/lifecycle/index.js');
type Lib = Awaited<ReturnType<typeof lib>>;

/**
 * The session a command names: a task's id (`t_…`, as every other command takes it, or `task-t_…`, its folder
 * as the README writes it) names that task's session, whose id is a folder name (`task-t-…`, bridge.ts
 * sessionIdFor); anything else is taken as a session id. A task's id was refused as a session id not matching
 * ^[a-z0-9]…, and nothing said which session holds the task's candidates.
 */
export function sessionArg(id: string): string {
  const task = /^(?:task-)?(t_[0-9a-z]+)$/i.exec(id)?.[1];
  return task ? sessionIdFor(task) : id;
}
const SESSION_ARG = "a session id, or a task's id (t_…) for the task's session";

/** One command's one-shot KnowledgeService (as the daemon builds it, without watchers): its lifecycle context, stopped after. */
async function withLifecycle<T>(env: Env, fn: (lc: LifecycleContext, k: Lib) => Promise<T> | T): Promise<T> {
  const [{ KnowledgeService, resolveKnowledgeConfig }, k] = await Promise.all([import('../../knowledge/service.js'), lib()]);
  const service = new KnowledgeService(resolveKnowledgeConfig(env, { oneShot: true }));
  service.start();
  try {
    return await fn(service.lifecycle, k);
  } finally {
    await service.stop();
  }
}
const rootOf = async (o: RootOpts, env: Env): Promise<WorkflowRoot> => (await lib()).resolveWorkflowRoot({ workflowRoot: o.workflowRoot, env });
const csv = (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((s) => s.trim()).filter(Boolean)];
const out = (o: RootOpts, value: unknown, text: string) => (o.json ? printJson(value) : printText(`${text}\n`));
const withRoot = (c: Command) => c.addOption(workflowRootOption()).option('--json', 'print JSON');

export function register(program: Command, ctx: CliContext): void {
  registerSession(program, ctx);
  const knowledge = program.command('knowledge').description('Run ledgers, reconciliation, review, promotion and audit.');
  knowledgeStage(knowledge, ctx);
  knowledgeRecord(knowledge, ctx);
  knowledgeReview(knowledge, ctx);
  knowledgePromote(knowledge, ctx);
  knowledgeAudit(knowledge, ctx);
}

/** `maestro session create|list|show|seal`. */
function registerSession(program: Command, ctx: CliContext): void {
  const session = program.command('session').description('Knowledge sessions (.workflow/sessions/<id>/): one per task.');
  withRoot(session.command('create <id>').description('Create a session (idempotent).').option('--objective <text>', 'what the session is for')).action(
    action(async (id: string, o: RootOpts & { objective?: string }) => {
      const r = (await lib()).createSession((await rootOf(o, ctx.env)), id, o.objective ?? '');
      out(o, r, `${r.created ? 'created' : 'exists'} session ${id}`);
    }),
  );
  withRoot(session.command('list').description("List sessions, marking those whose task is finished (and name the folders that do not read as one).")).action(
    action(async (o: RootOpts) => {
      const { sessions: listed, unreadable } = (await lib()).scanSessions(await rootOf(o, ctx.env));
      // Which task sessions are still live is the task store's to say (done, cancelled, superseded: finished).
      const standing = await taskStanding(listed.map((x) => x.session_id), ctx.env);
      if (standing.unasked) process.stderr.write(visible(`maestro: which task sessions belong to a finished task is not known here; the daemon did not answer: ${standing.unasked}\n`));
      const s = listed.map((x) => {
        const t = standing.bySession.get(x.session_id);
        return { ...x, task: t ? { id: t.id, status: t.status, finished: FINISHED_STATUSES.includes(t.status as TaskStatus) } : null };
      });
      const mark = (t: (typeof s)[number]['task']) => (t?.finished ? `(task ${t.status})  ` : '');
      out(o, { sessions: s, unreadable }, s.map((x) => `${x.session_id}  ${x.status}  ${mark(x.task)}${oneLine(x.objective)}`).join('\n') || (unreadable.length ? 'No readable sessions.' : 'No sessions.'));
      // The same folders `maestro knowledge audit` reports as invalid-session-authority, with why.
      if (!o.json) for (const u of unreadable) process.stderr.write(visible(`maestro: not listed, session.json missing or unreadable: sessions/${u.session_id}: ${u.error}\n`));
    }),
  );
  withRoot(session.command('show').argument('<id>', SESSION_ARG).description('Show a session and its runs.')).action(
    action(async (given: string, o: RootOpts) => {
      const id = sessionArg(given);
      const root = (await rootOf(o, ctx.env));
      const k = await lib();
      const s = k.readSession(root, id);
      // A run that does not read (its folder a link out of the project, its run.json corrupt) is named, not the end of the listing.
      const runs: Array<Awaited<ReturnType<typeof k.readRun>>> = [];
      const unreadable: Array<{ run_id: string; error: string }> = [];
      for (const rid of k.listRunIds(root, id)) {
        try {
          runs.push(k.readRun(root, id, rid));
        } catch (err) {
          if (!(err instanceof MaestroError)) throw err;
          unreadable.push({ run_id: rid, error: err.message });
        }
      }
      out(o, { session: s, runs, unreadable }, [`session ${id}: ${s.status}`, ...runs.map((r) => `  ${r.run_id}  ${r.status}  ${r.verdict ?? ''}`)].join('\n'));
      if (!o.json) for (const u of unreadable) process.stderr.write(visible(`maestro: not listed, run ${u.run_id}: ${u.error}\n`));
    }),
  );
  withRoot(session.command('seal').argument('<id>', SESSION_ARG).description('Seal (complete) a session; reports the unreviewed backlog, drops nothing.')).action(
    action(async (given: string, o: RootOpts) => {
      const id = sessionArg(given);
      const root = await rootOf(o, ctx.env);
      const r = await withLifecycle(ctx.env, async (lc, k) => {
        await k.warmSessionSemantic(lc, root, id);
        return k.sealSession(lc, root, id);
      });
      out(o, { schema: 'run-response/1.0', ok: true, command: 'session seal', data: r }, `session ${id} ${r.session.status}; backlog ${r.backlog} pending candidate(s)${r.unsealed_runs.length ? `; unsealed runs: ${r.unsealed_runs.join(', ')}` : ''}${r.unreadable.length ? `; not counted, unreadable: ${r.unreadable.map((u) => u.error).join('; ')}` : ''}`);
    }),
  );
}

function knowledgeStage(knowledge: Command, ctx: CliContext): void {
  withRoot(
    knowledge
      .command('stage <target> <title> [content]')
      .description('Stage a candidate (spec|knowhow) into a run or session ledger; it stays pending until promoted.')
      .option('--action <action>', 'propose|reaffirm|supersede|contest', 'propose')
      .option('--category <category>', 'category (spec: coding|arch|debug|test|review|learning|ui)')
      .option('--signal <signal>', 'also record consumed|cited|validated|contradicted for --signal-ids')
      .option('--signal-ids <ids>', 'knowledge ids (commas)', csv)
      .option('--evidence <refs>', 'evidence refs (commas)', csv)
      .option('--run <id>', 'run ledger (default: the active run)')
      .option('--session <id>', 'session of --run, or the session ledger when no --run')
      .option('--content-file <file>', 'read the content from a file'),
  ).action(
    action(async (target: string, title: string, content: string | undefined, o: RootOpts & { action: Action; category?: string; signal?: Signal; signalIds?: string[]; evidence?: string[]; run?: string; session?: string; contentFile?: string }) => {
      const text = o.contentFile ? readTextFile(o.contentFile, '--content-file') : content;
      if (!text) throw new MaestroError('BAD_INPUT', 'stage needs <content> or --content-file.');
      const r = (await lib()).stage((await rootOf(o, ctx.env)), { target: target as 'spec', title, content: text, action: o.action, category: o.category ?? null, ...(o.signal ? { signal: o.signal } : {}), signalIds: o.signalIds ?? [], evidence: o.evidence ?? [], ...(o.run ? { run: o.run } : {}), ...(o.session ? { session: o.session } : {}) }, ctx.env);
      out(o, r, `${r.candidate.candidate_id} ${r.candidate.status} (occurrences ${r.candidate.occurrences}) in ${r.ledger}`);
    }),
  );
}

function knowledgeRecord(knowledge: Command, ctx: CliContext): void {
  withRoot(
    knowledge
      .command('record <ids...>')
      .description('Record knowledge inputs (attribution only, no candidate).')
      .option('--signal <signal>', 'consumed|cited|validated|contradicted', 'cited')
      .option('--source <source>', 'load|search|injection|manual', 'manual')
      .option('--evidence <refs>', 'evidence refs (commas)', csv)
      .option('--run <id>', 'run ledger (default: the active run)')
      .option('--session <id>', 'session of --run, or the session ledger'),
  ).action(
    action(async (ids: string[], o: RootOpts & { signal: Signal; source: InputSource; evidence?: string[]; run?: string; session?: string }) => {
      const r = (await lib()).record((await rootOf(o, ctx.env)), ids.flatMap((i) => i.split(',')).filter(Boolean), { signal: o.signal, source: o.source, evidence: o.evidence ?? [], ...(o.run ? { run: o.run } : {}), ...(o.session ? { session: o.session } : {}) }, ctx.env);
      out(o, r, `recorded ${r.recorded.join(', ')} in ${r.ledger}`);
    }),
  );
}

function knowledgeReview(knowledge: Command, ctx: CliContext): void {
  withRoot(
    knowledge
      .command('review')
      .argument('<session>', SESSION_ARG)
      .description('Review candidates: receipt state, matches, disposition, eligibility; --resolve records a decision.')
      .option('--refresh', 'reconcile stale or missing receipts first')
      .option('--resolve <candidate>', 'candidate to resolve')
      .option('--resolve-all <disposition>', 'resolve every pending candidate with this disposition')
      .option('--as <as>', 'duplicate|related|conflict|supersede|unique')
      .option('--target <id>', 'knowledge id the resolution points at')
      .option('--reason <text>', 'evidence-backed reason (required with --resolve)')
      .option('--triage', 'print the triage order (corroboration, then age)'),
  ).action(
    action(async (given: string, o: RootOpts & { refresh?: boolean; resolve?: string; resolveAll?: string; as?: string; target?: string; reason?: string; triage?: boolean }) => {
      const sid = sessionArg(given);
      const root = (await rootOf(o, ctx.env));
      // Whether a person replaced the session's task version is the store's to say: the daemon is asked.
      const standing = await taskStanding([sid], ctx.env);
      if (standing.unasked) process.stderr.write(visible(`maestro: whether task session ${sid} holds a replaced version of its task is not known here; the daemon did not answer: ${standing.unasked}\n`));
      const superseded = standing.bySession.get(sid)?.superseded ?? null;
      let resolved: unknown = null;
      const r = await withLifecycle(ctx.env, async (lc, k) => {
        if (o.refresh || o.resolve || o.resolveAll) await k.warmSessionSemantic(lc, root, sid);
        if (o.resolve || o.resolveAll) {
          if (!o.as) throw new MaestroError('BAD_INPUT', '--resolve needs --as duplicate|related|conflict|supersede|unique.');
          if (o.refresh && !o.resolve) k.review(lc, root, sid, { refresh: true }); // --resolve refreshes once its input is checked
          resolved = o.resolve ? k.resolveCandidate(lc, root, sid, { candidate: o.resolve, as: o.as, refresh: Boolean(o.refresh), ...(o.target ? { target: o.target } : {}), reason: o.reason ?? '' }) : k.resolveAll(lc, root, sid, o.resolveAll!, o.as, o.reason ?? '');
        }
        return k.review(lc, root, sid, { refresh: Boolean(o.refresh) && !resolved, superseded });
      });
      if (o.json) return printJson(resolved ? { ...r, resolution: resolved } : r);
      printText(`${renderReview(r, Boolean(o.triage))}\n`);
    }),
  );
}

function knowledgePromote(knowledge: Command, ctx: CliContext): void {
  withRoot(
    knowledge
      .command('promote')
      .argument('<session>', SESSION_ARG)
      .description('Promote eligible candidates into specs / knowhow (fresh receipts and sealed source runs required).')
      .option('--candidate <id>', 'candidate id (repeatable, commas accepted)', csv)
      .option('--all', 'every eligible pending candidate of the session'),
  ).action(
    action(async (given: string, o: RootOpts & { candidate?: string[]; all?: boolean }) => {
      const sid = sessionArg(given);
      const root = await rootOf(o, ctx.env);
      const promoteIn = () =>
        withLifecycle(ctx.env, async (lc, k) => {
          await k.warmSessionSemantic(lc, root, sid);
          return k.promote(lc, root, sid, { candidates: o.candidate ?? [], all: Boolean(o.all) });
        });
      const { promoteHere, commitLines } = await import('./knowledgePromote.js');
      const r = await promoteHere({ root, sid, candidates: o.candidate ?? [], all: Boolean(o.all), env: ctx.env, promote: promoteIn });
      const lines = [
        ...r.promoted.map((p) => `${p.outcome} ${p.promoted_id} from ${p.candidate_id}${p.supersedes ? ` (supersedes ${p.supersedes})` : ''}`),
        ...r.already_promoted.map((p) => `already promoted ${p.candidate_id} → ${p.promoted_id}`),
        ...r.skipped_review_required.map((c) => `skipped ${c}: review required (maestro knowledge review ${sid})`),
        ...r.skipped_suppressed.map((c) => `skipped ${c}: suppressed`),
        ...r.skipped_blocked.map((b) => `skipped ${b.candidate_id}: ${b.reason}`),
        ...r.warnings.map((w) => `warning: ${w}`),
        // Committed in a project's own checkout (by its daemon, under its merge lease, or here when none runs), as the board's.
        ...commitLines(r, root),
      ];
      out(o, r, lines.join('\n') || 'Nothing to promote.');
    }),
  );
}

function knowledgeAudit(knowledge: Command, ctx: CliContext): void {
  withRoot(
    knowledge
      .command('audit')
      .description('Audit knowledge health; --prune plans soft deprecations, --apply backs up and applies them.')
      .option('--scope <scope>', 'spec|knowhow|all', 'all')
      .option('--prune', 'build the deterministic prune plan')
      .option('--apply', 'apply the plan (needs --prune)')
      .option('--force', 'apply even where a fresh pending candidate targets an entry'),
  ).action(
    action(async (o: RootOpts & { scope: string; prune?: boolean; apply?: boolean; force?: boolean }) => {
      const root = await rootOf(o, ctx.env);
      const r = await withLifecycle(ctx.env, (lc, k) => k.audit(lc, root, { scope: o.scope, prune: Boolean(o.prune), apply: Boolean(o.apply), force: Boolean(o.force) }));
      out(o, r, [`audit ${r.scope}: ${r.findings.length} finding(s)`, ...r.findings.map((f) => `  ${f.priority} ${f.subtype} ${f.target}: ${f.evidence}`), ...(r.prune_plan ? r.prune_plan.map((p) => `  plan ${p.action} ${p.target_id} → ${p.successor_id} (${p.reason})`) : []), ...(r.applied.count ? [`applied ${r.applied.count}; backup ${r.applied.backup_dir}`] : [])].join('\n'));
    }),
  );
}

/** Adds the knowledge lifecycle subcommands to the existing `maestro run` group. */
export function addRunLifecycleCommands(run: Command, ctx: CliContext): void {
  withRoot(run.command('create').description('Create a knowledge run in a session (run.json, report.md template).').requiredOption('--session <id>', 'session').option('--run-id <id>', 'run id (default run-<12 hex>)').option('--command <cmd>', 'command the run executes', 'manual').option('--activate', 'make it the active run (maestro load records consumed into it)')).action(
    action(async (o: RootOpts & { session: string; runId?: string; command: string; activate?: boolean }) => {
      const root = (await rootOf(o, ctx.env));
      const r = (await lib()).createRun(root, o.session, { ...(o.runId ? { runId: o.runId } : {}), command: o.command });
      if (o.activate) (await lib()).setActiveRun(root, o.session, r.run.run_id);
      out(o, r, `${r.created ? 'created' : 'exists'} run ${r.run.run_id} in session ${o.session}`);
    }),
  );
  withRoot(run.command('complete <run>').description('Stage accepted decisions / locked constraints from report.md as pending candidates and reconcile.').requiredOption('--session <id>', 'session')).action(
    action(async (rid: string, o: RootOpts & { session: string }) => {
      const root = await rootOf(o, ctx.env);
      const r = await withLifecycle(ctx.env, async (lc, k) => {
        await k.warmSessionSemantic(lc, root, o.session);
        return k.completeRun(lc, root, o.session, rid);
      });
      out(o, r, `run ${rid} completed; candidates: ${r.candidate_ids.join(', ') || 'none'}; unique ${r.reconciliation.unique}, review required ${r.reconciliation.review_required}, suppressed ${r.reconciliation.suppressed}`);
    }),
  );
  withRoot(run.command('check <run>').description('Reconcile the run and print the finish checklist.').requiredOption('--session <id>', 'session')).action(
    action(async (rid: string, o: RootOpts & { session: string }) => {
      const root = await rootOf(o, ctx.env);
      const r = await withLifecycle(ctx.env, async (lc, k) => {
        await k.warmSessionSemantic(lc, root, o.session);
        return k.checkRun(lc, root, o.session, rid);
      });
      out(o, { counts: r.receipt.counts, warnings: r.warnings, candidate_snapshot_hash: r.receipt.candidate_snapshot_hash, corpus_fingerprint: r.receipt.corpus_fingerprint }, [`run ${rid}: ${r.receipt.counts.candidates} candidate(s), receipt fresh`, ...r.warnings.map((w) => `warning: ${w}`)].join('\n'));
    }),
  );
  withRoot(run.command('seal <run>').description('Seal a run: it and its ledger become immutable.').requiredOption('--session <id>', 'session')).action(
    action(async (rid: string, o: RootOpts & { session: string }) => {
      const root = await rootOf(o, ctx.env);
      const r = await withLifecycle(ctx.env, async (lc, k) => {
        await k.warmSessionSemantic(lc, root, o.session);
        return k.sealRun(lc, root, o.session, rid);
      });
      const ledger = (await lib()).readLedger((await lib()).runSource(root, o.session, rid).ledgerPath);
      out(o, { ...r, ledger_revision: ledger?.revision ?? null }, `run ${rid} sealed; ${r.suppressed} exact duplicate(s) suppressed; ${r.pending} pending`);
    }),
  );
}

const GATE_NAMES: Record<string, string> = { plan_review: 'plan review', spec_review: 'spec review', exec_review: 'execution review' };

/** Where a superseded version's candidates come from: they may still hold, and a person decides each still open. */
export function supersededLine(v: NonNullable<ReviewResult['superseded']>, candidates: ReviewResult['candidates']): string {
  const why = v.cause === 'rejected' ? `rejected at ${GATE_NAMES[v.gate ?? ''] ?? v.gate ?? 'a gate'} by ${oneLine(v.who)}: ${oneLine(v.reason)}` : `retried from the current main by ${oneLine(v.who)} (${oneLine(v.reason)})`;
  const then = candidates.some(leftToDecide)
    ? 'What this try learned may still hold: decide each candidate.'
    : 'Nothing of it is left to decide: each candidate was decided (an exact duplicate of existing knowledge is rejected on its own).';
  return `from v${v.version} of the task, ${why}; the task goes on as v${v.superseded_by.version} (session ${v.superseded_by.session_id}). ${then}`;
}

/**
 * The knowledge the session's runs recorded reading, by source (`knowledge record --source`): the sources with a
 * count only ("injection 0" read as something injected), and `none recorded` when there is none.
 */
export function inputsLine(totals: Record<string, number>): string {
  const read = Object.entries(totals).filter(([, n]) => n > 0);
  return `inputs by source: ${read.length ? read.map(([k, n]) => `${oneLine(k)} ${n}`).join(', ') : 'none recorded'}`;
}

function renderReview(r: ReviewResult, triage: boolean): string {
  const lines = [`session ${r.session_id}`];
  if (r.superseded) lines.push(`  ${supersededLine(r.superseded, r.candidates)}`);
  for (const s of r.sources) lines.push(`  source ${s.run_id}: receipt ${s.receipt}${s.reasons.length && s.receipt !== 'fresh' ? ` (${oneLine(s.reasons.join('; '))})` : ''}${s.error ? ` — ${oneLine(s.error)}` : ''}`);
  for (const c of r.candidates) {
    // What an agent staged (its title, category) and earlier entries' titles are one line each: a line break in a
    // title would start a line reading as another candidate's, or as a line of the content below.
    lines.push(`${c.candidate_id} [${c.status}] ${c.target}/${c.action}${c.category ? ` (${oneLine(c.category)})` : ''} "${oneLine(c.title.slice(0, 80))}" from ${c.source_run}`);
    // The whole text a promote writes, every line indented: the title is only the agent's label for it.
    lines.push(...c.content.split(/\r?\n/).map((l) => `    | ${l}`));
    lines.push(`    receipt ${c.receipt}; ${c.disposition ?? '-'} / ${c.promotion_eligibility ?? '-'}${c.canonical_id ? `; target ${c.canonical_id}${c.canonical_status === 'inactive' ? ' (now inactive)' : ''}` : ''}${c.resolution ? `; ${c.resolution.status}: ${oneLine(c.resolution.reason)}` : ''}`);
    for (const m of c.matches) lines.push(`    ~ ${m.relation} ${m.knowledge_id} "${oneLine(m.title.slice(0, 60))}" (${oneLine(m.evidence.join('; '))})`);
    if (c.promote_command) lines.push(`    $ ${c.promote_command}`);
  }
  lines.push(inputsLine(r.input_totals_by_source));
  if (triage) for (const t of r.triage) lines.push(`  triage ${t.candidate_id}: corroboration ${t.corroboration}, since ${t.first_recorded_at ?? '-'}`);
  return lines.join('\n');
}
