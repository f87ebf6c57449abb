/**
 * `task show` at exec_review: what the task's runs staged for the knowledge review. The change and the knowledge
 * it brings are decided apart (a merge promotes nothing), and a person approving the change may not know there is
 * knowledge to review. The daemon reads the task's session where its runs work (its clone for a project on a
 * shared remote: GET /api/knowledge/review/<session>); a task whose runs staged nothing says nothing.
 */
import { MaestroError } from '../../core/errors.js';
import { resolveHome } from '../../config/home.js';
import { leftToDecide, sessionIdFor } from '../../core/supersededVersion.js';
import type { Task } from '../../core/types.js';
import type { ApiClient } from '../../api/client.js';
import type { ReviewResult } from '../../api/wire/knowledgeReview.js';
import type { ProjectDetail } from '../../api/wire/responses.js';
import { workRepoOf } from '../../daemon/repos.js';
import { shellWord } from '../../core/diffGateWays.js';
import { oneLine } from '../../lib/visible.js';

export interface StagedKnowledge {
  session_id: string;
  /** Candidates the task's runs staged (one each, however many runs proposed it). */
  candidates: number;
  /** Of them, still a person's to decide (core/supersededVersion.ts leftToDecide: an exact duplicate is rejected on its own). */
  undecided: number;
  /** The command that reviews them, on the host whose daemon ran the task. */
  command: string;
}

/** `env`: the CLI's, whose MAESTRO_HOME is the daemon's it asks (that daemon's clones are under it). */
export async function stagedKnowledge(client: ApiClient, task: Pick<Task, 'id' | 'projectId'>, env: NodeJS.ProcessEnv): Promise<StagedKnowledge | null> {
  const sid = sessionIdFor(task.id);
  let review: ReviewResult;
  try {
    review = await client.get<ReviewResult>(`/api/knowledge/review/${sid}?projectId=${encodeURIComponent(task.projectId)}`);
  } catch (err) {
    // No run of it reached the knowledge bridge here (no session), or the project's folder is gone (BAD_INPUT: the
    // knowledge root does not exist): no session to speak of; the rest of the task is shown as ever.
    if (err instanceof MaestroError && (err.code === 'UNKNOWN_SESSION' || err.code === 'BAD_INPUT')) return null;
    throw err;
  }
  const ids = new Set(review.candidates.map((c) => c.candidate_id));
  if (!ids.size) return null;
  const undecided = new Set(review.candidates.filter(leftToDecide).map((c) => c.candidate_id)).size;
  const { project } = await client.get<ProjectDetail>(`/api/projects/${encodeURIComponent(task.projectId)}`);
  // Where the daemon works on the project: its clone under its home on a shared remote, else the repository.
  const root = shellWord(workRepoOf(resolveHome(env), project));
  return { session_id: sid, candidates: ids.size, undecided, command: `maestro knowledge review ${task.id} --workflow-root ${root}` };
}

export function stagedKnowledgeLine(k: StagedKnowledge): string {
  const n = k.candidates === 1 ? '1 knowledge candidate' : `${k.candidates} knowledge candidates`;
  return `This task's runs staged ${n} (${k.undecided} not decided yet), reviewed apart from the change (approving it promotes none): ${k.command}`;
}

type ElsewhereRun = { daemon: string; runId: string; kind: string; host: string | null; home: string | null; error: string | null };

/**
 * The candidates runs on another daemon proposed that could not be brought here (a task taken over at review: the
 * daemon imports the ledger each run's daemon stored in the database, daemon/knowledgeImport.ts): a run that
 * finished before ledgers were stored, or one whose stored ledger does not read. Said at the gate, one line per
 * daemon, with why, where they are and how to review them there.
 */
export function knowledgeElsewhereLines(task: Pick<Task, 'id'>, runs: readonly ElsewhereRun[]): string[] {
  const sid = sessionIdFor(task.id);
  const byDaemon = new Map<string, ElsewhereRun[]>();
  for (const r of runs) byDaemon.set(r.daemon, [...(byDaemon.get(r.daemon) ?? []), r]);
  return [...byDaemon.entries()].map(([daemon, theirs]) => {
    const name = oneLine(daemon);
    const which = theirs.map((r) => `${r.kind} run ${r.runId}`).join(', ');
    const first = theirs[0]!;
    const where = first.home !== null ? `under ${oneLine(first.home)} on ${oneLine(first.host ?? 'its host')}` : `under its MAESTRO_HOME on its host`;
    const errors = theirs.filter((r) => r.error !== null).map((r) => oneLine(r.error!));
    const why = errors.length ? `their ledger stored in the database could not be imported (${errors.join('; ')})` : 'they finished before runs\' candidates were stored in the database';
    return `The knowledge candidates proposed by the ${which} on daemon ${name} are not available here: ${why}, so they are staged only in ${name}'s clone of the project (.workflow/sessions/${sid}/runs/<run>/, ${where}). Review them there: maestro knowledge review ${task.id}, on ${name}'s host.`;
  });
}
