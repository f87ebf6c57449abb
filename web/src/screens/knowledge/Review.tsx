/**
 * The review queue: each session's candidates (CandidateCard), a reconcile when receipts went stale, the inputs it read.
 *
 * A promotion writes an entry, so every receipt matched against the project knowledge before it is stale after it.
 * The API's promote refreshes such a receipt itself and refuses a candidate whose standing the refresh changed
 * (promote/gates.ts), as the CLI's does; so Promote is offered on a stale receipt too (not on a missing one). After
 * its own promotion the board reconciles the session it promoted in, when that session was fresh before: its
 * staleness is then the board's own doing, and the next Resolve needs a fresh receipt. A session stale for another
 * reason (an entry edited, another session promoted, a new matcher) says why, and what Reconcile does.
 */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { knowledge, type ReviewQueueSession } from '../../api/knowledge.js';
import { leftToDecide } from '../../api/types.js';
import { href } from '../../stores/route.js';
import styles from '../Screens.module.css';
import { CandidateCard } from './CandidateCard.js';
import { entryLink, Unavailable, useLoad } from './common.js';

function SessionReview({ projectId, s, onChanged, onRefused }: { projectId: string; s: ReviewQueueSession; onChanged(note: string): void; onRefused(): void }) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | null>(null);
  const r = s.review;
  const staleSources = r?.sources.filter((x) => x.receipt !== 'fresh') ?? [];
  const stale = !!r && (staleSources.length > 0 || r.candidates.some((c) => c.receipt !== 'fresh'));
  const reconcile = async () => {
    setError(null);
    try {
      await knowledge.reconcile(projectId, s.session_id);
      onChanged(t('knowledge.done'));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const promoted = async (note: string, wrote: boolean) => {
    if (wrote && !stale) {
      try {
        await knowledge.reconcile(projectId, s.session_id);
      } catch (err) {
        setError((err as Error).message);
      }
    }
    onChanged(note);
  };
  return (
    <section aria-label={t('knowledge.session', { id: s.session_id })} className={styles.card}>
      <h3>
        {t('knowledge.session', { id: s.session_id })} <span className={styles.badge}>{s.status}</span>
        {r?.superseded && <> <span className={styles.badge}>{t('knowledge.supersededBadge', { version: r.superseded.version })}</span></>}
      </h3>
      {s.objective && <p className={styles.muted}>{s.objective}</p>}
      {r?.superseded && <Superseded v={r.superseded} open={r.candidates.some(leftToDecide)} />}
      {s.error && <p role="alert" className={styles.error}>{t('knowledge.sessionError', { message: s.error.message })}</p>}
      {r && (
        <>
          <p className={styles.muted}>{t('knowledge.candidates', { count: r.candidates.length })}</p>
          {stale && (
            <div data-testid="review-stale">
              <p>{t('knowledge.staleWhy', { reasons: staleSources.map((x) => `${x.run_id}: ${x.reasons.join('; ')}`).join(' · ') })}</p>
              <p className={styles.row}>
                <span className={styles.muted}>{t('knowledge.reconcileDoes')}</span>
                <button onClick={() => void reconcile()}>{t('knowledge.reconcile')}</button>
              </p>
            </div>
          )}
          {error && <p role="alert" className={styles.error}>{error}</p>}
          {r.candidates.map((c) => <CandidateCard key={`${c.candidate_id}-${c.source_run}`} projectId={projectId} sessionId={s.session_id} c={c} onChanged={onChanged} onPromoted={promoted} onRefused={onRefused} />)}
          {r.inputs.length > 0 && (
            <>
              <h4>{t('knowledge.inputs')}</h4>
              <ul>
                {r.inputs.map((i) => (
                  <li key={`${i.run_id}-${i.knowledge_id}-${i.signal}-${i.source}`}>
                    {entryLink(i.knowledge_id)} <span className={styles.badge}>{i.signal}</span> ×{i.count} {i.evidence.map((ev) => <code key={ev}> {ev}</code>)}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}

/**
 * Where a superseded version's candidates come from (the queue lists such sessions after the current ones), and
 * whether any is left to decide (`open`): exact duplicates of existing knowledge are rejected on their own.
 */
function Superseded({ v, open }: { v: NonNullable<NonNullable<ReviewQueueSession['review']>['superseded']>; open: boolean }) {
  const { t } = useTranslation();
  const common = { version: v.version, who: v.who, next: v.superseded_by.version };
  return (
    <p className={styles.muted} data-testid="review-superseded">
      {v.cause === 'rejected'
        ? t(open ? 'knowledge.fromRejected' : 'knowledge.fromRejectedDecided', { ...common, gate: t(`status.${v.gate}`, { defaultValue: v.gate ?? '' }), reason: v.reason })
        : t(open ? 'knowledge.fromRetried' : 'knowledge.fromRetriedDecided', { ...common, reason: v.reason })}
    </p>
  );
}

/** `sessionId`: the queue of that session alone (the task detail's link at exec_review), with a way back to all of it. */
export function Review({ projectId, sessionId }: { projectId: string; sessionId?: string }) {
  const { t } = useTranslation();
  const { result, error, reload } = useLoad(() => knowledge.reviewQueue(projectId), [projectId]);
  const [note, setNote] = useState<string | null>(null);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  // A superseded version's sessions after the current ones (the daemon lists them so; kept here for an older daemon's queue).
  const sessions = result.data.sessions
    .filter((s) => (!sessionId || s.session_id === sessionId) && (s.error || (s.review?.candidates.length ?? 0) > 0))
    .sort((a, b) => Number(Boolean(a.review?.superseded)) - Number(Boolean(b.review?.superseded)));
  const changed = (msg: string) => {
    setNote(msg);
    reload();
  };
  return (
    <>
      {sessionId && (
        <p className={styles.row} data-testid="review-filter">
          <span className={styles.muted}>{t('knowledge.oneSession', { id: sessionId })}</span>
          <a href={href({ name: 'knowledge', view: 'review' })}>{t('knowledge.wholeQueue')}</a>
        </p>
      )}
      {note && <p role="status" data-testid="review-note">{note}</p>}
      {sessions.length === 0 && <p className={styles.muted} data-testid="review-empty">{t('knowledge.queueEmpty')}</p>}
      {sessions.map((s) => <SessionReview key={s.session_id} projectId={projectId} s={s} onChanged={changed} onRefused={reload} />)}
    </>
  );
}
