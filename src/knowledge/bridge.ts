/**
 * The orchestrator's view of knowledge (issue "Knowledge II", step 1): every
 * task is a session, every agent run a knowledge run whose directory IS the
 * orchestrator's run directory (`$MAESTRO_HOME/runs/<task>/<run>/`). The
 * session's `runs/<run-id>` entry is a symlink to it, so the ledger, report
 * and receipt sit next to the agent's transcript and are still found through
 * the project's `.workflow/sessions/` (review, promote, audit). We chose the
 * link over a copy so there is one ledger, written in one place.
 *
 * Nothing here may fail a run: the daemon wraps every call.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Task } from '../core/types.js';
import { builtinSources, loadCorpus } from './corpus.js';
import { buildKeywordIndex } from './keywordIndex.js';
import { watchCorpus } from './ledger/corpusDocs.js';
import { review } from './reconcile/review.js';
import { resolveWorkflowRoot, type WorkflowRoot } from './root.js';
import { completeRun, sealRun, type CompleteResult } from './session/ops.js';
import { createRun, createSession, isSealed, readRun, readSession } from './session/store.js';
import { AGENT_REPORT_PATH } from './agentReport.js';

export interface BridgeRunInfo {
  task: Pick<Task, 'id' | 'title'> & { spec?: string | null };
  run: { id: string; kind?: string };
  runDir: string;
  repoPath: string;
}

/** Session ids are path segments `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`: `task-<task id>`. */
export function sessionIdFor(taskId: string): string {
  return `task-${slug(taskId)}`;
}
export function runIdFor(runId: string): string {
  return slug(runId);
}
function slug(x: string): string {
  return x.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100) || 'x';
}

function rootFor(repoPath: string): WorkflowRoot {
  const root = resolveWorkflowRoot({ workflowRoot: repoPath, includeGlobal: true });
  // The daemon lives long: watch the corpus so reconciling a run stats only the files that changed.
  watchCorpus(root.workflowDir);
  return root;
}

const MAX_SPECS = 5;
const MAX_SPEC_CHARS = 600;

export class KnowledgeBridge {
  /** The reconciliation card and keyword-injected specs (deprecated skipped): text for "What the project already knows". */
  briefFor(task: Pick<Task, 'id' | 'title'> & { spec?: string | null }, repoPath: string): string {
    const root = rootFor(repoPath);
    const sid = sessionIdFor(task.id);
    const lines: string[] = ['## Knowledge reconciliation card (knowledge-reconciliation-card/1.0)'];
    let pending = 0;
    let needReview = 0;
    if (existsSync(join(root.workflowDir, 'sessions', sid, 'session.json'))) {
      const r = review(root, sid);
      pending = r.candidates.filter((c) => c.status === 'pending' || c.status === 'draft').length;
      needReview = r.candidates.filter((c) => c.promotion_eligibility === 'review_required').length;
    }
    lines.push(
      `- Session ${sid}: ${pending} pending candidate(s), ${needReview} awaiting human review. Candidates never change project rules by themselves.`,
      '- Load what you rely on with `maestro load --id <id>` (recorded as consumed for this run); search results are not recorded.',
      `- To propose a rule or record a decision, write \`${AGENT_REPORT_PATH}\` with YAML frontmatter: \`decisions: [{text: "...", status: accepted}]\`, \`constraints: [{text: "...", status: locked}]\`. It is moved out of the worktree (never committed) and becomes pending candidates for review.`,
    );
    const entries = loadCorpus(builtinSources(root)).entries;
    const hits = buildKeywordIndex(entries).match(`${task.title}\n${task.spec ?? ''}`, MAX_SPECS);
    if (hits.length) {
      lines.push('', '## Relevant specs (keyword injection)');
      for (const h of hits) {
        const body = h.entry.body.replace(/^\s*###[^\n]*\n?/, '').replace(/\s+/g, ' ').trim();
        lines.push(`- [${h.entry.sid ?? h.id}] ${h.title}: ${body.length > MAX_SPEC_CHARS ? `${body.slice(0, MAX_SPEC_CHARS)}…` : body}`);
      }
    }
    return lines.join('\n');
  }

  /** Ensures the task's session and registers the run, its folder linked to the orchestrator's run directory. */
  onRunStarted(info: BridgeRunInfo): { sessionId: string; runId: string } {
    const root = rootFor(info.repoPath);
    const sid = sessionIdFor(info.task.id);
    createSession(root, sid, info.task.title);
    const rid = runIdFor(info.run.id);
    createRun(root, sid, { runId: rid, command: info.run.kind ?? 'execute', goal: info.task.title, linkTo: info.runDir });
    return { sessionId: sid, runId: rid };
  }

  /** Reads the agent's report into pending candidates, reconciles, and seals the run (the agent is done with it). */
  onRunFinished(info: BridgeRunInfo): (CompleteResult & { sealed: boolean }) | null {
    const root = rootFor(info.repoPath);
    const sid = sessionIdFor(info.task.id);
    const rid = runIdFor(info.run.id);
    try {
      readSession(root, sid);
      if (isSealed(readRun(root, sid, rid))) return null;
    } catch {
      return null; // never registered (started before knowledge was wired, or its start failed)
    }
    const done = completeRun(root, sid, rid);
    sealRun(root, sid, rid);
    return { ...done, sealed: true };
  }
}
