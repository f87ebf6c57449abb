/**
 * What the review routes read: a task's version chain, the commit range a
 * version's change spans, its check results and its reviewers' verdicts.
 * Checks and verdicts come from the runs' own records (stages.json, the check
 * logs, the run.phase events), so nothing is copied into the database twice.
 */
import { existsSync, readSync, closeSync, fstatSync } from 'node:fs';
import { openRegular } from '../../lib/regularFile.js';
import { join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { ownCar, reviewedHead } from '../../core/reviewed.js';
import type { MaestroEvent, Project, Run, Task } from '../../core/types.js';
import { movedAdvice } from '../../daemon/mergeTrain.js';
import { baseBranchOf, remoteOf } from '../../daemon/repos.js';
import { loadProjectConfig } from '../../executor/projectConfig.js';
import { branchName, readJob, type CheckConfig } from '../../executor/protocol/job.js';
import { readStages } from '../../executor/protocol/stages.js';
import { git } from '../../git/git.js';
import type { Store } from '../../store/store.js';
import type { CheckView, FindingView, VerdictView, VersionRef } from '../wire/responses.js';

export type { CheckView, FindingView, VerdictView, VersionRef } from '../wire/responses.js';


/** Every version of the task's chain, oldest first. */
export async function versionChain(store: Store, task: Task): Promise<Task[]> {
  const chain = [task];
  while (chain[0]!.parentVersionId) chain.unshift(await store.tasks.get(chain[0]!.parentVersionId!));
  for (;;) {
    const row = await store.db.one<{ id: string }>(`SELECT id FROM tasks WHERE parent_version_id = $1 ORDER BY version DESC LIMIT 1`, [chain[chain.length - 1]!.id]);
    if (!row) break;
    chain.push(await store.tasks.get(row.id));
  }
  return chain;
}

export const versionRefs = (chain: Task[]): VersionRef[] => chain.map((t) => ({ id: t.id, version: t.version, status: t.status }));

/** The task `id` names, or the version `version` of its chain. */
export async function pickVersion(store: Store, id: string, version: number | undefined): Promise<{ task: Task; chain: Task[] }> {
  const named = await store.tasks.get(id);
  const chain = await versionChain(store, named);
  if (version === undefined) return { task: named, chain };
  const task = chain.find((t) => t.version === version);
  if (!task) throw new MaestroError('NOT_FOUND', `Task ${id} has no version ${version}; its versions are ${chain.map((t) => t.version).join(', ')}.`, { details: { taskId: id, version } });
  return { task, chain };
}

export async function resolveCommit(repo: string, ref: string): Promise<string | null> {
  const r = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { okCodes: [1, 128] });
  return r.code === 0 ? r.stdout.trim() : null;
}

export interface DiffRange {
  branch: string;
  base: string;
  /** The commit whose change is shown: the reviewed one once a review approved it (core/reviewed.ts), else the branch tip. */
  head: string;
  /** The branch's tip when it is no longer the reviewed commit shown, with what that means (mergeBlocked's words). */
  branchMoved: { reviewed: string; tip: string; message: string } | null;
}

/** The merged event's record of a merge: main before it and after it. */
async function mergeRecord(store: Store, task: Task): Promise<{ sha: string | null; previousSha: string | null; how: string | null } | null> {
  let after: number | undefined;
  for (;;) {
    const page = await store.events.list({ taskId: task.id, type: 'task.status', after, limit: 1000 });
    const hit = page.events.find((e) => e.payload.merged);
    if (hit) {
      const m = hit.payload.merged as { sha?: string | null; previousSha?: string | null; how?: string };
      return { sha: m.sha ?? null, previousSha: m.previousSha ?? null, how: m.how ?? null };
    }
    if (page.nextAfter === null) return null;
    after = page.nextAfter;
  }
}

/**
 * The commits a version's change spans: its branch tip (or the commit its
 * result names, once the branch is gone) against the merge base with the base
 * branch as it was before the merge (for a merged version) or is now. Once its
 * reviewers approved a commit (exec_review and after), that commit, not the
 * tip: the branch can move after the review (worktrees share branches), and the
 * person approves, and the merge takes, what was reviewed. A tip moved since is
 * named in `branchMoved`.
 *
 * On a shared remote the version may have run (or been merged) on another daemon, whose commits this
 * host's clone has not fetched yet: the commit the result names comes first (this clone's branch may be an
 * older attempt's), and when neither it nor the merge is here, `refresh` fetches the remote and it is
 * looked for again. A person is never shown NO_DIFF, or an older attempt, for work that is on the remote.
 */
export async function diffRange(store: Store, project: Project, task: Task, refresh?: () => Promise<void>): Promise<DiffRange> {
  const shared = remoteOf(project) !== null;
  // Before the fetch, only the commit the result names will do: a branch here may be an older attempt's.
  let range = await findRange(store, project, task, shared, shared && !!refresh);
  // Fetched only for a version that has something to find: a task that never ran waits for no remote.
  const ran = !!(task.result?.branch || task.result?.commitSha);
  if (!range && shared && refresh && (ran || task.status === 'done')) {
    await refresh();
    range = await findRange(store, project, task, shared, false);
  }
  if (range) return range;
  const branch = branchOf(task);
  const why = ran
    ? `its branch ${branch} no longer exists in ${project.repoPath}${shared ? ` nor on the remote ${remoteOf(project)}` : ''} and its last commit is gone`
    : `it has no branch yet (status ${task.status}: no execute run has committed a change)`;
  throw new MaestroError('NO_DIFF', `Task ${task.id} v${task.version} has no change to show: ${why}.`, { details: { taskId: task.id, branch } });
}

/** The task's branch: the one its run recorded, else the name its runs give it. */
export const branchOf = (task: Task): string => (typeof task.result?.branch === 'string' ? task.result.branch : branchName(task.id, task.version));

async function findRange(store: Store, project: Project, task: Task, shared: boolean, recordedOnly: boolean): Promise<DiffRange | null> {
  const repo = project.repoPath;
  const branch = branchOf(task);
  if (task.status === 'done') {
    const merged = await mergedRange(store, repo, task, branch);
    if (merged) return merged;
  }
  const reviewed = reviewedHead(task);
  // Checked together with other changes, its reviewed commit is the chain's tip: its own merge commit there is its change.
  const car = reviewed ? ownCar(task) : null;
  const recorded = car?.sha ?? reviewed ?? (typeof task.result?.commitSha === 'string' ? task.result.commitSha : null);
  const refs = recordedOnly && recorded ? [] : [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`];
  let head: string | null = null;
  for (const ref of shared || reviewed ? [recorded, ...refs] : [...refs, recorded]) if (ref && !head) head = await resolveCommit(repo, ref);
  if (!head) return null;
  const after = car?.after && head === car.sha ? await resolveCommit(repo, car.after) : null;
  return { branch, base: after ?? (await mergeBase(repo, baseBranchOf(project), head, task, branch)), head, branchMoved: reviewed && !shared ? await movedFrom(repo, branch, reviewed) : null };
}

/**
 * The project's own branch when it no longer points at the reviewed commit; null while it does, or is gone. Not
 * for a shared remote's clone, whose branches are as last fetched: the merge train checks them after its fetch,
 * and the task detail's mergeBlocked says nothing there either.
 */
export async function movedFrom(repo: string, branch: string, reviewed: string): Promise<DiffRange['branchMoved']> {
  const tip = await resolveCommit(repo, `refs/heads/${branch}`);
  return tip && tip !== reviewed ? { reviewed, tip, message: movedAdvice(branch, reviewed, tip) } : null;
}

async function mergeBase(repo: string, baseRef: string, head: string, task: Task, branch: string): Promise<string> {
  const mb = await git(repo, ['merge-base', '--end-of-options', baseRef, head], { okCodes: [1] });
  if (mb.code !== 0) throw new MaestroError('NO_DIFF', `Task ${task.id} v${task.version}: ${branch} shares no history with ${baseRef}.`, { details: { taskId: task.id, branch } });
  return mb.stdout.trim();
}

/**
 * A merged version's change, from the merge record (its branch may be gone):
 * a merge commit's second parent against the merge base with its first; a
 * fast-forward's new main against main before it. Null when not recorded.
 */
async function mergedRange(store: Store, repo: string, task: Task, branch: string): Promise<DiffRange | null> {
  const merged = await mergeRecord(store, task);
  const sha = merged?.sha ? await resolveCommit(repo, merged.sha) : null;
  if (!sha) return null;
  // A fast-forward's new main is the branch tip itself, even when that tip is the branch's own merge of main
  // (its second parent is then main, not the task's work): only a merge commit of ours has the work as ^2.
  const second = merged?.how === 'fast-forward' ? null : await resolveCommit(repo, `${sha}^2`);
  const before = merged?.previousSha ? await resolveCommit(repo, merged.previousSha) : second ? await resolveCommit(repo, `${sha}^1`) : null;
  if (!before) {
    throw new MaestroError('NO_DIFF', `Task ${task.id} v${task.version} is merged, but the main commit it was merged onto is not recorded; its change cannot be told apart from main's.`, { details: { taskId: task.id, branch } });
  }
  const head = second ?? sha;
  return { branch, base: await mergeBase(repo, before, head, task, branch), head, branchMoved: null };
}

// ---- checks -----------------------------------------------------------------


const TAIL_BYTES = 4000;

/** The last few KB of a log (a running check's log grows while we read it: read only its end). */
function tailOf(path: string): string {
  if (!existsSync(path)) return '';
  const fd = openRegular(path);
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    const text = buf.toString('utf8');
    return start > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    closeSync(fd);
  }
}

function checksOf(run: Run | undefined, project: Project): CheckConfig[] {
  try {
    if (run?.runDir && existsSync(join(run.runDir, 'job.json'))) {
      const job = readJob(run.runDir);
      if (job.checks) return job.checks;
    }
  } catch {
    // an unreadable job.json: fall back to the project's configuration
  }
  try {
    return loadProjectConfig(project.repoPath).checks;
  } catch {
    return [];
  }
}

/** Every event of `type` a run wrote, oldest first, page by page. */
export async function runEvents(store: Store, runId: string, type: string): Promise<MaestroEvent[]> {
  const out: MaestroEvent[] = [];
  let after: number | undefined;
  for (;;) {
    const page = await store.events.list({ runId, type, after, limit: 1000 });
    out.push(...page.events);
    if (page.nextAfter === null) return out;
    after = page.nextAfter;
  }
}

/** Statuses in which a version that never ran its checks will not: they show as skipped, not pending. */
const NO_RUN_TO_COME: readonly Task['status'][] = ['superseded', 'cancelled', 'done', 'waiting_children'];

/** The check gates of a version's latest run that ran them (execute, conflict or merge check), or the configured ones, pending. */
export async function checkViews(store: Store, project: Project, task: Task): Promise<CheckView[]> {
  const runs = (await store.runs.list({ taskId: task.id })).filter((r) => r.kind === 'execute' || r.kind === 'conflict' || r.kind === 'merge_check');
  const run = runs[runs.length - 1];
  const configured = checksOf(run, project);
  // No run, and none to come for this version (superseded by a reject at its plan gate, cancelled, a parent its
  // subtasks carry out): its checks will not run, so not 'pending', which read as a wait.
  if (!run) return configured.map((c) => view(c, NO_RUN_TO_COME.includes(task.status) ? 'skipped' : 'pending'));
  const phases = await runEvents(store, run.id, 'run.phase');
  const done = run.runDir ? readStagesSafe(run.runDir) : {};
  return configured.map((c) => {
    const stageName = `check:${c.name}`;
    const mine = phases.filter((e) => e.payload.stage === stageName);
    const last = mine[mine.length - 1];
    const logPath = run.runDir ? join(run.runDir, 'checks', `${c.name}.log`) : null;
    const outputTail = logPath ? tailOf(logPath) : '';
    const output = done[stageName]?.output as { exitCode?: number | null; durationMs?: number; tail?: string } | undefined;
    if (output || last?.payload.state === 'done' || last?.payload.state === 'skipped') {
      return { ...view(c, 'passed', run.id), exitCode: output?.exitCode ?? 0, durationMs: output?.durationMs ?? null, outputTail: outputTail || output?.tail || '' };
    }
    if (last?.payload.state === 'failed') {
      const message = String((last.payload.detail as { message?: string } | undefined)?.message ?? '');
      const exit = /exit (\d+)/.exec(message);
      const started = mine.find((e) => e.payload.state === 'start');
      return { ...view(c, 'failed', run.id), exitCode: exit ? Number(exit[1]) : null, durationMs: started ? last.at - started.at : null, outputTail: outputTail || message };
    }
    if (last?.payload.state === 'start') {
      return run.status === 'running' ? { ...view(c, 'running', run.id), outputTail } : { ...view(c, 'skipped', run.id), outputTail };
    }
    return view(c, run.status === 'running' ? 'pending' : 'skipped', run.id);
  });
}

function view(c: CheckConfig, status: CheckView['status'], runId: string | null = null): CheckView {
  return { name: c.name, command: typeof c.command === 'string' ? c.command : c.command.join(' '), status, exitCode: null, durationMs: null, outputTail: '', runId };
}

// ---- findings ---------------------------------------------------------------



interface StoredReview {
  reviewer?: string;
  verdict?: 'approve' | 'reject';
  summary?: string;
  findings?: Array<{ severity?: string; file?: string; line?: number; message?: string }>;
}

/**
 * Each finished review run's verdicts (from its stages.json), else the task result's latest review. Every
 * verdict and finding says its round (the review runs with a verdict, counted from 1): the newest round is
 * what a gate decides on; the earlier ones are what the agent was asked to fix.
 */
export async function reviewViews(store: Store, task: Task): Promise<{ verdicts: VerdictView[]; findings: FindingView[] }> {
  const verdicts: VerdictView[] = [];
  const findings: FindingView[] = [];
  const add = (review: StoredReview, runId: string, round: number) => {
    const reviewer = review.reviewer ?? 'code';
    const list = review.findings ?? [];
    verdicts.push({ reviewer, verdict: review.verdict ?? 'approve', summary: review.summary || summarize(list.length), runId, round });
    for (const f of list) findings.push({ reviewer, severity: f.severity ?? 'medium', file: f.file ?? null, line: f.line ?? null, message: f.message ?? '', runId, round });
  };
  const runs = (await store.runs.list({ taskId: task.id })).filter((r) => (r.kind === 'review' || r.kind === 'conflict') && r.runDir);
  let round = 0;
  for (const run of runs) {
    const done = readStagesSafe(run.runDir!);
    const outs = ['review:code', 'review:security'].map((name) => done[name]?.output as StoredReview | undefined).filter((o): o is StoredReview => Boolean(o?.verdict));
    if (outs.length) round++;
    for (const out of outs) add(out, run.id, round);
  }
  if (!verdicts.length && Array.isArray(task.result?.reviews)) {
    const lastReview = [...(await store.runs.list({ taskId: task.id }))].reverse().find((r) => r.kind === 'review');
    for (const r of task.result.reviews as StoredReview[]) add(r, lastReview?.id ?? '', 1);
  }
  return { verdicts, findings };
}

function readStagesSafe(runDir: string): Record<string, { output: unknown }> {
  try {
    return readStages(runDir).done;
  } catch {
    return {};
  }
}

const summarize = (n: number) => (n === 0 ? 'no findings' : n === 1 ? '1 finding' : `${n} findings`);
