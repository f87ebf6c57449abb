/** A candidate of the review queue: what a promote writes, its receipt and matches with their evidence, and the form that resolves or promotes it. */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { knowledge, RESOLVE_AS, type PromotionResult, type ReviewCandidate } from '../../api/knowledge.js';
import { visible } from '../../components/hiddenChars.js';
import styles from '../Screens.module.css';
import { entryLink } from './common.js';
import { useProjects } from '../../stores/projects.js';

/** What a card tells its session: a change made (`note` to show), a promotion (`wrote`: an entry was written), a refusal to reload after. */
interface CardEvents {
  onChanged(note: string): void;
  onPromoted(note: string, wrote: boolean): void | Promise<void>;
  onRefused(): void;
}

export function CandidateCard({ projectId, sessionId, c, ...on }: { projectId: string; sessionId: string; c: ReviewCandidate } & CardEvents) {
  const { t } = useTranslation();
  return (
    <section className={styles.card} aria-label={visible(c.title)} data-candidate={c.candidate_id}>
      <strong>{visible(c.title)}</strong> <code className={styles.muted}>{c.candidate_id}</code>
      <p className={styles.muted}>{t('knowledge.candidateFrom', { run: c.source_run, kind: c.source_kind, category: c.category ? ` · ${c.category}` : '' })}</p>
      {/* The title is the agent's label; this is what a promote writes, whole, with invisible characters shown. */}
      <pre data-testid="candidate-content" aria-label={t('knowledge.promotesText')} style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{visible(c.content)}</pre>
      <CandidateBadges c={c} />
      {c.resolution && <p className={styles.muted}>{t('knowledge.resolvedAs', { reason: c.resolution.reason })}</p>}
      <h4>{t('knowledge.matches')}</h4>
      <CandidateMatches c={c} />
      <ResolveForm projectId={projectId} sessionId={sessionId} c={c} {...on} />
    </section>
  );
}

/** Where the candidate goes, its status, whether its receipt still holds, and what it was resolved as. */
function CandidateBadges({ c }: { c: ReviewCandidate }) {
  const { t } = useTranslation();
  return (
    <p>
      <span className={styles.badge}>{c.target}</span>
      <span className={styles.badge}>{t(`knowledge.statusName.${c.status}` as 'knowledge.statusName.draft', { defaultValue: c.status })}</span>
      <span className={styles.badge}>
        {t('knowledge.receipt')}: {t(`knowledge.receiptState.${c.receipt}`)}
      </span>
      {c.disposition && (
        <span className={styles.badge}>
          {t('knowledge.disposition')}: {t(`knowledge.dispositionName.${c.disposition}`)}
        </span>
      )}
      {c.promotion_eligibility && (
        <span className={styles.badge}>
          {t('knowledge.eligibility')}: {t(`knowledge.eligibilityName.${c.promotion_eligibility}`)}
        </span>
      )}
    </p>
  );
}

/** The entries the candidate matched, each with its relation, score and evidence. */
function CandidateMatches({ c }: { c: ReviewCandidate }) {
  const { t } = useTranslation();
  if (c.matches.length === 0) return <p className={styles.muted}>{t('knowledge.noMatches')}</p>;
  return (
    <ul>
      {c.matches.map((m) => (
        <li key={`${m.knowledge_id}-${m.relation}`}>
          {entryLink(m.knowledge_id)} {visible(m.title)} <span className={styles.badge}>{t(`knowledge.dispositionName.${m.relation}`)}</span> <span className={styles.muted}>{m.scores.composite.toFixed(2)}</span>
          {m.evidence.length > 0 && (
            <ul aria-label={t('knowledge.evidence')}>
              {m.evidence.map((ev) => <li key={ev}><code>{ev}</code></li>)}
            </ul>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * Resolve (as unique, or against a target with a reason) and promote, while the candidate is open; then the
 * error of the last try, if any. Resolve needs a fresh receipt; Promote takes a stale one too, as the API does: the
 * promotion refreshes it and refuses the candidate if its standing changed (promote/gates.ts), and the queue is then
 * read again to show the standing the refresh found. A missing receipt has nothing to compare with: reconcile first.
 */
function ResolveForm({ projectId, sessionId, c, onChanged, onPromoted, onRefused }: { projectId: string; sessionId: string; c: ReviewCandidate } & CardEvents) {
  const { t } = useTranslation();
  const [as, setAs] = useState<(typeof RESOLVE_AS)[number]>('unique');
  const [target, setTarget] = useState(c.canonical_id ?? c.matches[0]?.knowledge_id ?? '');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const project = useProjects((s) => s.projects.find((p) => p.id === projectId));
  const open = c.status === 'pending' || c.status === 'draft';
  const canPromote = c.status === 'pending' && c.receipt !== 'missing' && c.promotion_eligibility === 'eligible';
  const resolve = async (e: FormEvent) => {
    e.preventDefault();
    if (!reason.trim()) return setError(t('knowledge.needReason'));
    if (as !== 'unique' && !target.trim()) return setError(t('knowledge.needTarget'));
    setBusy(true);
    setError(null);
    try {
      const r = await knowledge.resolve(projectId, sessionId, { candidate: c.candidate_id, as, reason: reason.trim(), ...(as !== 'unique' ? { target: target.trim() } : {}) });
      onChanged(t('knowledge.resolvedAs', { reason: `${r.resolution.candidate_id} → ${t(`knowledge.dispositionName.${r.resolution.disposition}` as 'knowledge.dispositionName.unique')}` }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const promote = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await knowledge.promote(projectId, sessionId, { candidates: [c.candidate_id] });
      const ids = [...r.promoted.map((p) => p.promoted_id), ...r.already_promoted.map((p) => p.promoted_id ?? p.candidate_id)];
      const why = [...r.skipped_review_required, ...r.skipped_suppressed, ...r.skipped_blocked.map((b) => `${b.candidate_id}: ${b.reason}`)];
      const written = project && typeof project.config.remote !== 'string' ? inCheckout(r, visible(project.repoPath), t) : '';
      await onPromoted(ids.length ? `${t('knowledge.promoted', { ids: ids.join(', ') })}${written}` : t('knowledge.notPromoted', { why: why.join('; ') }), r.promoted.length > 0);
    } catch (err) {
      setError((err as Error).message);
      onRefused();
    } finally {
      setBusy(false);
    }
  };
  const idBase = `cand-${sessionId}-${c.candidate_id}-${c.source_run}`;
  return (
    <>
      {open && (
        <form className={styles.row} onSubmit={(e) => void resolve(e)}>
          <label htmlFor={`${idBase}-as`}>{t('knowledge.resolveAs')}</label>
          <select id={`${idBase}-as`} value={as} onChange={(e) => setAs(e.target.value as typeof as)}>
            {RESOLVE_AS.map((a) => <option key={a} value={a}>{t(`knowledge.as.${a}`)}</option>)}
          </select>
          {as !== 'unique' && (
            <>
              <label htmlFor={`${idBase}-target`}>{t('knowledge.target')}</label>
              <input id={`${idBase}-target`} list={`${idBase}-targets`} value={target} onChange={(e) => setTarget(e.target.value)} maxLength={300} />
              <datalist id={`${idBase}-targets`}>{c.matches.map((m) => <option key={m.knowledge_id} value={m.knowledge_id}>{visible(m.title)}</option>)}</datalist>
            </>
          )}
          <label htmlFor={`${idBase}-reason`}>{t('knowledge.reason')}</label>
          <input id={`${idBase}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
          <button type="submit" disabled={busy || c.receipt !== 'fresh'}>{t('knowledge.resolve')}</button>
          <button type="button" disabled={busy || !canPromote} onClick={() => void promote()}>{t('knowledge.promote')}</button>
        </form>
      )}
      {error && <p role="alert" className={styles.error}>{error}</p>}
    </>
  );
}

/**
 * What became of a promotion's files in the project's own checkout (a shared remote's is pushed: nothing to say):
 * the daemon's commit, and what it left uncommitted and why (the person's own edits in a file); a server that
 * commits nothing (no `commit` in its answer) wrote them only, as the CLI says.
 */
function inCheckout(r: PromotionResult, folder: string, t: TFunction): string {
  if (!r.commit) return r.promoted.length ? ` ${t('knowledge.notCommitted', { folder })}` : '';
  const { sha, uncommitted, why } = r.commit;
  const committed = sha ? ` ${t('knowledge.committedIn', { folder, sha: sha.slice(0, 7) })}` : '';
  const left = uncommitted.length ? ` ${t('knowledge.leftUncommitted', { folder, files: uncommitted.map(visible).join(', '), why: visible(why ?? '') })}` : '';
  return committed + left;
}
