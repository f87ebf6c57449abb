/**
 * The reviewer's evidence for a task version (issue 15, contract in
 * notes API15): its diff against the merge base, its check gates, its
 * reviewers' verdicts and findings. Every route takes any version's id;
 * `?version=N` picks another version of the same chain.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { reviewedHead, staleReview } from '../../core/reviewed.js';
import { RUNS_ELSEWHERE } from '../../core/runsElsewhere.js';
import { STEERING } from '../../core/steering.js';
import { GATES, type Gate, type Project, type Task } from '../../core/types.js';
import { git } from '../../git/git.js';
import { readPatch } from '../../git/patch.js';
import { watchedThroughLinks } from '../../git/linkAliases.js';
import { filesRunningElsewhere } from '../../git/runsElsewhere.js';
import { changedSteering } from '../../git/steering.js';
import type { LineComment } from '../../store/ops/gates.js';
import type { Store } from '../../store/store.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type OpenApiDoc } from '../route.js';
import { checkViews, diffRange, pickVersion, reviewViews } from './reviewData.js';
import { idParam, queryInt } from './schemas.js';
import { checksResponse, diffResponse, findingsResponse, type DiffResponse } from '../wire/responses.js';

export type { DiffResponse } from '../wire/responses.js';

const versionQuery = z.object({ version: queryInt(1, 100_000).optional() }).strict();
const diffQuery = versionQuery.extend({ file: z.string().min(1).max(4096).optional() }).strict();

/** What the review helpers need: the store, and where a project's task branches live. */
export interface ReviewContext {
  store: Store;
  /** The repository holding the project's task branches: its own, or this host's clone of a shared remote. */
  repoFor: (project: Project) => string;
  /** Fetches a shared remote into this host's clone (work another daemon ran or merged); absent: nothing to fetch. */
  refresh?: (project: Project) => Promise<void>;
}

export function reviewContext(deps: Pick<ApiDeps, 'store' | 'repoFor' | 'refreshRepo'>): ReviewContext {
  return { store: deps.store, repoFor: deps.repoFor ?? ((p) => p.repoPath), refresh: deps.refreshRepo };
}

async function projectRepo(ctx: ReviewContext, task: Task): Promise<Project> {
  const project = await ctx.store.projects.get(task.projectId);
  return { ...project, repoPath: ctx.repoFor(project) };
}

/** The diff of one task version (optionally one file of it). */
export async function taskDiff(ctx: ReviewContext, task: Task, file?: string): Promise<DiffResponse> {
  const project = await projectRepo(ctx, task);
  const refresh = ctx.refresh;
  const range = await diffRange(ctx.store, project, task, refresh && (() => refresh(project)));
  const files = await readPatch(project.repoPath, range.base, range.head, file === undefined ? {} : { file });
  if (file !== undefined && !files.length) throw new MaestroError('NOT_FOUND', `${file} is not part of the change of task ${task.id} v${task.version}.`, { details: { taskId: task.id, file } });
  const totals = { files: files.length, additions: files.reduce((n, f) => n + f.additions, 0), deletions: files.reduce((n, f) => n + f.deletions, 0) };
  return { taskId: task.id, version: task.version, ...range, totals, files };
}

/** What the person at exec_review is told about the files of the change before approving (the task detail's). */
export interface GateFiles {
  /** Files that steer later runs (core/steering.ts). */
  steeringFiles: string[];
  /** Files that run code outside Maestro once merged: CI, git hooks, dev containers, package scripts (core/runsElsewhere.ts). */
  runsElsewhere: string[];
}

/**
 * At exec_review, the files of the change that steer later runs (core/steering.ts): hooks and checks that run
 * as code, knowledge that later prompts quote without the knowledge review; and a folder above one of them that
 * the change replaces (core/watchedPaths.ts). Beside them, the files that run code elsewhere once
 * merged (git/runsElsewhere.ts). Both said before approving, neither blocks it; none when the change cannot be read
 * here (the diff route says why).
 */
export async function gateFiles(ctx: ReviewContext, task: Task): Promise<GateFiles> {
  const none = { steeringFiles: [], runsElsewhere: [] };
  if (task.status !== 'exec_review') return none;
  try {
    const project = await projectRepo(ctx, task);
    const { base, head } = await diffRange(ctx.store, project, task);
    // The links on the way to both lists' paths, read once (git/linkAliases.ts).
    const via = await watchedThroughLinks(project.repoPath, head, { steering: STEERING, elsewhere: RUNS_ELSEWHERE });
    // Each on its own: one list that cannot be read leaves the other said.
    const unread = (): string[] => [];
    const [steeringFiles, runsElsewhere] = await Promise.all([
      changedSteering(project.repoPath, base, head, via.steering).catch(unread),
      filesRunningElsewhere(project.repoPath, base, head, via.elsewhere).catch(unread),
    ]);
    return { steeringFiles, runsElsewhere };
  } catch {
    return none;
  }
}

/** The gate the task waits at, or the one given (which the store checks). */
export function gateFor(task: Task, given: Gate | undefined): Gate {
  if (given) return given;
  if ((GATES as readonly string[]).includes(task.status)) return task.status as Gate;
  throw new MaestroError('WRONG_GATE', `Task ${task.id} is ${task.status}: it waits at no gate, so there is nothing to approve or reject.`, { details: { taskId: task.id, status: task.status } });
}

/**
 * An approval's `commit`, the `head` of the diff the person looked at. Only exec_review approves a change: a
 * commit named at a plan or spec gate is refused (BAD_INPUT), since its sender believes it approves code it
 * saw, and the task waits on something else. At exec_review the store checks it against the reviewed commit in
 * the approval's transaction (store/ops/gates.ts); a result that names none (written before results did) is
 * checked here against the head its diff shows. Another gate's task, or none: the store says WRONG_GATE.
 */
export async function checkApprovedCommit(ctx: ReviewContext, task: Task, gate: Gate, commit: string): Promise<void> {
  if (gate !== 'exec_review') {
    throw new MaestroError('BAD_INPUT', `commit: only an approval at exec_review names a commit (the change's); ${gate} approves no change, so leave it out.`, { details: { taskId: task.id, gate } });
  }
  if (task.status !== gate || reviewedHead(task) !== null) return;
  const project = await projectRepo(ctx, task);
  const refresh = ctx.refresh;
  const { head } = await diffRange(ctx.store, project, task, refresh && (() => refresh(project)));
  if (head !== commit) throw staleReview(task, commit, head);
}

/**
 * Blobs counted here up to this size; a line comment on a bigger one is taken at its word. Read whole, a 65 MB file
 * overflowed git()'s 64 MB buffer: the comment's approval or rejection answered 500, its message holding the file.
 */
const COUNTED_BYTES = 32 * 1024 * 1024;

async function lineCount(repo: string, commit: string, path: string): Promise<number> {
  const size = await git(repo, ['cat-file', '-s', `${commit}:${path}`], { okCodes: [128] });
  if (size.code !== 0) return 0;
  if (Number(size.stdout.trim()) > COUNTED_BYTES) return Infinity;
  const r = await git(repo, ['cat-file', 'blob', `${commit}:${path}`], { okCodes: [128] });
  if (r.code !== 0) return 0;
  return r.stdout === '' ? 0 : r.stdout.split('\n').length - (r.stdout.endsWith('\n') ? 1 : 0);
}

/**
 * Each comment must name a file of the version's change and a line that
 * exists on its side (new: the file after the change; old: before it).
 * The first bad one is refused, naming its index, file and line.
 */
export async function checkComments(ctx: ReviewContext, task: Task, comments: LineComment[]): Promise<void> {
  if (!comments.length) return;
  let diff: DiffResponse;
  try {
    diff = await taskDiff(ctx, task);
  } catch (err) {
    if (err instanceof MaestroError && err.code === 'NO_DIFF') throw new MaestroError('BAD_INPUT', `comments: line comments need a change to comment on, and ${err.message}`, { details: { taskId: task.id } });
    throw err;
  }
  const project = await projectRepo(ctx, task);
  for (const [i, c] of comments.entries()) {
    const where = `comments[${i}] (${c.file}:${c.line})`;
    const file = diff.files.find((f) => (c.side === 'old' ? (f.oldPath ?? f.path) === c.file || f.path === c.file : f.path === c.file));
    if (!file) throw new MaestroError('BAD_INPUT', `${where}: ${c.file} is not part of this change (${diff.totals.files} file(s) changed).`, { details: { index: i, file: c.file, line: c.line } });
    if (file.binary) throw new MaestroError('BAD_INPUT', `${where}: ${c.file} is a binary file; it has no lines to comment on.`, { details: { index: i, file: c.file, line: c.line } });
    const commit = c.side === 'old' ? diff.base : diff.head;
    const path = c.side === 'old' ? (file.oldPath ?? file.path) : file.path;
    const count = (c.side === 'old' && file.status === 'added') || (c.side === 'new' && file.status === 'deleted') ? 0 : await lineCount(project.repoPath, commit, path);
    if (c.line > count) {
      const has = count === 0 ? `has no ${c.side} side (it is ${file.status})` : `has ${count} line(s) on its ${c.side} side`;
      throw new MaestroError('BAD_INPUT', `${where}: line ${c.line} does not exist; ${c.file} ${has}.`, { details: { index: i, file: c.file, line: c.line } });
    }
  }
}

export function registerReviewRoutes(app: FastifyInstance, doc: OpenApiDoc, deps: ApiDeps): void {
  const tags = ['review'];
  const { store } = deps;
  const ctx = reviewContext(deps);

  defineRoute(app, doc, { method: 'GET', url: '/api/tasks/:id/diff', summary: "A task version's change against its merge base: files (status, stats, binary, collapsed) and hunks; ?file= one file whole", tags, params: idParam, query: diffQuery, response: diffResponse }, async ({ params, query }) => {
    const { task } = await pickVersion(store, params.id, query.version);
    return taskDiff(ctx, task, query.file);
  });

  defineRoute(app, doc, { method: 'GET', url: '/api/tasks/:id/checks', summary: "A task version's check gates: command, status, exit code, duration, output tail", tags, params: idParam, query: versionQuery, response: checksResponse }, async ({ params, query }) => {
    const { task } = await pickVersion(store, params.id, query.version);
    return { taskId: task.id, version: task.version, checks: await checkViews(store, await projectRepo(ctx, task), task) };
  });

  defineRoute(app, doc, { method: 'GET', url: '/api/tasks/:id/findings', summary: "A task version's review verdicts and findings (file, line)", tags, params: idParam, query: versionQuery, response: findingsResponse }, async ({ params, query }) => {
    const { task } = await pickVersion(store, params.id, query.version);
    return { taskId: task.id, version: task.version, ...(await reviewViews(store, task)) };
  });
}
