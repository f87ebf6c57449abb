/**
 * At exec_review, under the gate: the knowledge candidates the task's runs staged, as `maestro task show` names them
 * (src/cli/commands/taskKnowledge.ts), from the route it asks (GET /api/knowledge/review/<session>). The change and
 * the knowledge it brings are decided apart (approving the change promotes none), so a person approving it learns
 * there is knowledge to decide, and a link opens the review queue on this task's session alone. A task whose runs
 * staged nothing (no session yet, or an empty one) says nothing.
 */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../api/client.js';
import { knowledge, type ReviewCandidate } from '../../api/knowledge.js';
import { leftToDecide, sessionIdFor, type Task } from '../../api/types.js';
import { href } from '../../stores/route.js';
import { visible } from '../hiddenChars.js';
import styles from './Detail.module.css';

/** A candidate staged by several runs is listed once per run: one line each, as the CLI counts them. */
function distinct(candidates: readonly ReviewCandidate[]): ReviewCandidate[] {
  const seen = new Map<string, ReviewCandidate>();
  for (const c of candidates) if (!seen.has(c.candidate_id)) seen.set(c.candidate_id, c);
  return [...seen.values()];
}

/** Pending, and an exact duplicate of an entry: its run's seal rejects it on its own (leftToDecide). */
const exactDuplicate = (c: ReviewCandidate) => (c.status === 'pending' || c.status === 'draft') && !leftToDecide(c);

/** What the session's review said, for which task: another task's answer is never shown while this one's is on its way. */
type Found = { taskId: string; candidates: ReviewCandidate[]; error: string | null };

/**
 * Runs of the task on another daemon (a task taken over at review) whose candidates the daemon could not import
 * from the database: `error` says why their stored ledger was refused; null, none was stored (an older run).
 */
type ElsewhereRun = { daemon: string; runId: string; kind: string; error?: string | null };

function NotHere({ task, runs }: { task: Task; runs: readonly ElsewhereRun[] }) {
  const { t } = useTranslation();
  const daemons = [...new Set(runs.map((r) => visible(r.daemon)))].join(', ');
  const errors = runs.flatMap((r) => (r.error ? [visible(r.error)] : []));
  const why = errors.length ? t('staged.elsewhereRefused', { errors: errors.join('; ') }) : t('staged.elsewhereOld');
  return (
    <p role="status" className={styles.muted} data-testid="knowledge-elsewhere">
      {t('staged.elsewhere', { daemons, runs: runs.map((r) => `${r.kind} ${r.runId}`).join(', '), task: task.id, why })}
    </p>
  );
}

export function StagedKnowledge({ task, elsewhere }: { task: Task; elsewhere?: readonly ElsewhereRun[] }) {
  const notHere = task.status === 'exec_review' && elsewhere?.length ? <NotHere task={task} runs={elsewhere} /> : null;
  return (
    <>
      <StagedHere task={task} />
      {notHere}
    </>
  );
}

function StagedHere({ task }: { task: Task }) {
  const { t } = useTranslation();
  const atGate = task.status === 'exec_review';
  const sid = sessionIdFor(task.id);
  const [found, setFound] = useState<Found | null>(null);

  // Asked again whenever the task changes (the feed reloads it), so a decision made meanwhile is counted.
  useEffect(() => {
    if (!atGate) return;
    let live = true;
    const said = (candidates: ReviewCandidate[], error: string | null = null) => live && setFound({ taskId: task.id, candidates, error });
    knowledge
      .session(task.projectId, sid)
      .then((r) => (r.available ? distinct(r.data.candidates) : []))
      .then(
        (candidates) => said(candidates),
        (err: unknown) =>
          // No run of it reached the knowledge bridge (no session), or the project's folder is gone: nothing to say, as task show.
          err instanceof ApiError && (err.code === 'UNKNOWN_SESSION' || err.code === 'BAD_INPUT') ? said([]) : said([], (err as Error).message),
      );
    return () => {
      live = false;
    };
  }, [atGate, task.id, task.projectId, sid, task.updatedAt]);

  if (!atGate || found?.taskId !== task.id || (!found.candidates.length && !found.error)) return null;
  if (found.error) return <p role="status" className={styles.err} data-testid="staged-knowledge">{t('staged.unreadable', { message: found.error })}</p>;
  const { candidates } = found;
  return (
    <section className={styles.section} aria-labelledby="staged-h" data-testid="staged-knowledge">
      <h3 id="staged-h">{t('staged.title')}</h3>
      {/* Still a person's to decide: the review queue's rule (core/supersededVersion.ts), so an exact duplicate is not counted. */}
      <p>{t('staged.summary', { count: candidates.length, undecided: candidates.filter(leftToDecide).length })}</p>
      <ul className={styles.names}>
        {candidates.map((c) => (
          <li key={c.candidate_id}>
            {visible(c.title)} <span className={styles.muted}>({exactDuplicate(c) ? t('staged.duplicate') : t(`knowledge.statusName.${c.status}` as 'knowledge.statusName.draft', { defaultValue: c.status })})</span>
          </li>
        ))}
      </ul>
      <a href={href({ name: 'knowledge', view: 'review', id: sid })}>{t('staged.review')}</a>
    </section>
  );
}
