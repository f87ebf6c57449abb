/**
 * The daemon's knowledge review, promotion and audit routes (seed 000 §8–9),
 * registered by the knowledge plugin (knowledge.ts). They call the same library
 * functions as `maestro knowledge review|promote|audit`; every route names a
 * registered project (`projectId`), and the daemon maps it to that project's
 * `.workflow/` — a client never sends a path, and nothing is read or written
 * outside that root. A POST's write awaits the project's `.workflow` lock (format/lock.ts withWorkflowLockAsync): while
 * a person's `maestro knowledge …` holds it, the daemon answers its other requests.
 *
 *   GET  /api/knowledge/review?projectId=                     every session with its review (a superseded task version's last), and those that do not read
 *   GET  /api/knowledge/review/:sessionId?projectId=           one session's review (a task's at its gate imports its runs' on other daemons first)
 *   POST /api/knowledge/review/:sessionId/reconcile?projectId= refresh stale receipts, answer the review
 *   POST /api/knowledge/review/:sessionId/resolve?projectId=   {candidate, as, target?, reason, refresh?}
 *   POST /api/knowledge/review/:sessionId/promote?projectId=   {candidates:[…]} | {all:true}
 *   GET  /api/knowledge/audit?projectId=&scope=&prune=         read-only findings (and the prune plan)
 */
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { defineRoute, OpenApiDoc } from '../route.js';
import { errorBody } from '../../core/errors.js';
import { audit } from '../../knowledge/lifecycle/audit/audit.js';
import type { LifecycleContext } from '../../knowledge/lifecycle/context.js';
import { promote, type PromotionResult } from '../../knowledge/lifecycle/promote/promote.js';
import type { CheckoutCommit } from '../../daemon/checkoutKnowledge.js';
import type { RefreshHint } from '../../knowledge/lifecycle/reconcile/receipt.js';
import { RESOLVE_FIELDS, resolveCandidate, review } from '../../knowledge/lifecycle/reconcile/review.js';
import { scoreSessionAhead } from '../../knowledge/lifecycle/reconcile/scoreAhead.js';
import { auditQuery, projectQuery, promoteBody, resolveBody, sessionParams } from '../../knowledge/lifecycle/reviewSchemas.js';
import { resolveWorkflowRoot, type WorkflowRoot } from '../../knowledge/format/root.js';
import { withWorkflowLockAsync } from '../../knowledge/format/lock.js';
import { scanSessions, sessionsDir } from '../../knowledge/lifecycle/session/store.js';
import { sessionIdFor, taskIdOfSession, type SupersededVersion } from '../../core/supersededVersion.js';
import { auditResponse, promotionResponse, resolveResponse, reviewQueueResponse, reviewResponse, type ReviewQueueSession } from '../wire/knowledgeReview.js';

export interface ReviewRouteOptions {
  /** The repository folder of a registered project; throws UNKNOWN_PROJECT for any other id. */
  projectRoot: (projectId: string) => Promise<string>;
  /**
   * Runs a promotion where the project's knowledge lives and commits what it wrote, under the merge lease: on a
   * shared remote in this daemon's clone, pushed (daemon/sharedKnowledge.ts); else in the project's checkout, its
   * result saying what was committed (daemon/checkoutKnowledge.ts). Absent, the route runs it in place, uncommitted.
   */
  promoteCommitted?: (projectId: string, sessionId: string, promote: (repoPath: string) => Promise<PromotionResult>) => Promise<PromotionResult & { commit?: CheckoutCommit }>;
  /**
   * Which of a project's task versions a person replaced, and why (the store's tasks.superseded): what a task's
   * session says as `superseded`. The store, not the session folder, knows it: a rejection made on another
   * daemon is known here too. Absent (a server without a store): null.
   */
  supersededOf?: (projectId: string, taskIds: readonly string[]) => Promise<Map<string, SupersededVersion>>;
  /**
   * Called before one session's review is read: a task's session at its gate first imports the candidates of the
   * task's runs on other daemons (daemon/knowledgeImport.ts). Absent: nothing is imported.
   */
  beforeReview?: (projectId: string, sessionId: string) => Promise<void>;
  /** The KnowledgeService's lifecycle context, given to every operation. */
  lifecycle: LifecycleContext;
  /** The daemon's environment (MAESTRO_HOME, MAESTRO_UID: a root's personal specs): the KnowledgeService's config. */
  env: NodeJS.ProcessEnv;
  doc?: OpenApiDoc;
}

/**
 * How a receipt error tells an API caller to rebuild the receipt: the route that does it (the CLI's `--refresh`
 * means nothing here). The resolve route says its own body field instead (RESOLVE_FIELDS).
 */
const RECONCILE_ROUTE: RefreshHint = (sid) => `POST /api/knowledge/review/${sid}/reconcile`;

/** Session reviews the queue does between two turns of the event loop (about 3 ms of work on 2 cores). */
const REVIEWS_PER_TURN = 8;

export function registerReviewRoutes(app: FastifyInstance, opts: ReviewRouteOptions): void {
  const doc = opts.doc ?? new OpenApiDoc();
  const lc = opts.lifecycle;
  const tags = ['knowledge'];
  // Confined: a registered project's own `.workflow/`, never $MAESTRO_HOME's global specs.
  const rootFor = async (projectId: string): Promise<WorkflowRoot> => resolveWorkflowRoot({ workflowRoot: await opts.projectRoot(projectId), env: opts.env });
  /** What the store says of each session's task version, by session id (a session no task made: none). */
  const supersededFor = async (projectId: string, sids: readonly string[]): Promise<Map<string, SupersededVersion>> => {
    const tasks = sids.flatMap((sid) => taskIdOfSession(sid) ?? []);
    const byTask = tasks.length && opts.supersededOf ? await opts.supersededOf(projectId, tasks) : new Map<string, SupersededVersion>();
    return new Map([...byTask.values()].map((v) => [sessionIdFor(v.task_id), v]));
  };
  const supersededOne = async (projectId: string, sid: string) => (await supersededFor(projectId, [sid])).get(sid) ?? null;

  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/review', summary: 'The review queue: every knowledge session of a project with its candidates', tags, query: projectQuery, response: reviewQueueResponse }, async ({ query }) => {
    const root = await rootFor(query.projectId);
    const listing = scanSessions(root);
    // The corpus once for the whole queue: each session's receipts are checked against the same one.
    const corpus = lc.corpus.read(root.workflowDir);
    const superseded = await supersededFor(query.projectId, listing.sessions.map((s) => s.session_id));
    const sessions: ReviewQueueSession[] = [];
    for (const [i, s] of listing.sessions.entries()) {
      // Each review reads its session's files synchronously: 1,000 sessions are about 0.3 s. The daemon's
      // other work (the board's WebSocket, the API, the orchestrator's ticks) gets a turn between every few.
      if (i > 0 && i % REVIEWS_PER_TURN === 0) await setImmediate();
      try {
        sessions.push({ session_id: s.session_id, objective: s.objective, status: s.status, review: review(lc, root, s.session_id, { corpus, hint: RECONCILE_ROUTE, superseded: superseded.get(s.session_id) ?? null }) });
      } catch (err) {
        // One session's corrupt files leave the rest of the queue readable; its error is shown as the API would answer it.
        sessions.push({ session_id: s.session_id, objective: s.objective, status: s.status, review: null, error: errorBody(err) });
      }
    }
    // A rejected (or retried) version's candidates may still hold and stay for a person to decide; they come after
    // the current versions' (stable: each part keeps the listing's order), each session saying where it comes from.
    sessions.sort((a, b) => Number(Boolean(a.review?.superseded)) - Number(Boolean(b.review?.superseded)));
    // A folder whose session.json does not read is named, with why, instead of missing from the queue without a word.
    const unreadable = listing.unreadable.map((u) => ({ session_id: u.session_id, file: join(sessionsDir(root), u.session_id, 'session.json'), error: u.error }));
    return { projectId: query.projectId, sessions, unreadable };
  });

  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/review/:sessionId', summary: "One session's review: candidates, receipts, matches, triage (a task at its gate: with its runs' on other daemons, imported)", tags, params: sessionParams, query: projectQuery, response: reviewResponse }, async ({ params, query }) => {
    const root = await rootFor(query.projectId);
    await opts.beforeReview?.(query.projectId, params.sessionId);
    return review(lc, root, params.sessionId, { hint: RECONCILE_ROUTE, superseded: await supersededOne(query.projectId, params.sessionId) });
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/knowledge/review/:sessionId/reconcile', summary: "Refresh a session's stale or missing receipts", tags, params: sessionParams, query: projectQuery, response: reviewResponse }, async ({ params, query }) => {
    const root = await rootFor(query.projectId);
    await scoreSessionAhead(lc, root, params.sessionId); // the scoring, in slices: the refresh then only decides
    const superseded = await supersededOne(query.projectId, params.sessionId);
    return withWorkflowLockAsync(root.workflowDir, () => review(lc, root, params.sessionId, { refresh: true, hint: RECONCILE_ROUTE, superseded }));
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/knowledge/review/:sessionId/resolve', summary: 'Record a human decision on a candidate (fresh receipt required)', tags, params: sessionParams, query: projectQuery, body: resolveBody, response: resolveResponse }, async ({ params, query, body }) => {
    const root = await rootFor(query.projectId);
    // The refresh runs inside, after the candidate and target are checked: a refused request writes nothing.
    // Scoring ahead writes nothing either; it lets that refresh only decide.
    if (body.refresh) await scoreSessionAhead(lc, root, params.sessionId);
    const input = { candidate: body.candidate, as: body.as, reason: body.reason, refresh: body.refresh, ...(body.target ? { target: body.target } : {}) };
    const resolution = await withWorkflowLockAsync(root.workflowDir, () => resolveCandidate(lc, root, params.sessionId, input, RESOLVE_FIELDS));
    return { resolution, review: review(lc, root, params.sessionId, { hint: RECONCILE_ROUTE, superseded: await supersededOne(query.projectId, params.sessionId) }) };
  });

  defineRoute(app, doc, { method: 'POST', url: '/api/knowledge/review/:sessionId/promote', summary: 'Promote eligible candidates into project knowledge', tags, params: sessionParams, query: projectQuery, body: promoteBody, response: promotionResponse }, async ({ params, query, body }) => {
    // In the folder it is given: on a shared remote, the clone as just synced (it may not have existed before).
    const promoteIn = (repoPath: string) => {
      const root = resolveWorkflowRoot({ workflowRoot: repoPath, env: opts.env });
      return withWorkflowLockAsync(root.workflowDir, () => promote(lc, root, params.sessionId, { ...('all' in body ? { all: true } : { candidates: body.candidates }), hint: RECONCILE_ROUTE }));
    };
    // A stale receipt is refreshed by the promotion (promote/gates.ts): its scoring done first, in slices. On a
    // shared remote the promotion runs in the clone as synced under the lease, and scores there what changed.
    await scoreSessionAhead(lc, await rootFor(query.projectId), params.sessionId);
    return opts.promoteCommitted ? opts.promoteCommitted(query.projectId, params.sessionId, promoteIn) : promoteIn(await opts.projectRoot(query.projectId));
  });

  defineRoute(app, doc, { method: 'GET', url: '/api/knowledge/audit', summary: 'The knowledge audit report (read-only)', tags, query: auditQuery, response: auditResponse }, async ({ query }) =>
    audit(lc, await rootFor(query.projectId), { scope: query.scope, prune: query.prune }),
  );
}
